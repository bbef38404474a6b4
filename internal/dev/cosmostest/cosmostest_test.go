package cosmostest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/dev/emulator"
)

// failureTB records a failure instead of failing the test it wraps.
type failureTB struct {
	testing.TB
	messages []string
	failed   bool
}

func (f *failureTB) Helper() {}
func (f *failureTB) Errorf(format string, args ...any) {
	f.messages = append(f.messages, fmt.Sprintf(format, args...))
}
func (f *failureTB) FailNow() {
	f.failed = true
	// As testing.T's FailNow does: the caller's goroutine ends here.
	runtime.Goexit()
}

// With $HCPSCHED_NO_EMULATOR set, New fails the test before it reaches any database,
// the emulator or an account named by $HCPSCHED_COSMOS_ENDPOINT alike.
func TestNewFailsWhileCosmosIsExcluded(t *testing.T) {
	t.Setenv(emulator.EnvExcluded, "1")
	t.Setenv("HCPSCHED_COSMOS_ENDPOINT", "https://account.invalid:443/")
	f := &failureTB{TB: t}
	done := make(chan *Database)
	go func() {
		defer close(done)
		done <- New(f, "excluded", nil)
	}()
	assert.Nil(t, <-done)
	assert.True(t, f.failed)
	assert.Contains(t, fmt.Sprint(f.messages), "make check")
}
