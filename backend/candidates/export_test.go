package candidates

// Refresh parses the MC of key again from the caches, as an event of one of its
// documents does, for benchmarks that change one MC without a store write.
func (s *Snapshot) Refresh(key string) { s.refresh(key) }
