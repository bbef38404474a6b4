package informers

import "flag"

// AddFlags registers the cache tuning flags on fs, filling opts.
func AddFlags(fs *flag.FlagSet, opts *Options) {
	fs.DurationVar(&opts.PollInterval, "changefeed-poll-interval", DefaultPollInterval, "How often each container's change feed is polled")
	fs.DurationVar(&opts.StallTimeout, "changefeed-stall-timeout", DefaultStallTimeout, "How long a container's change feed may go without a completed poll before /readyz fails")
	fs.DurationVar(&opts.RelistPeriod, "cache-relist-period", DefaultRelistPeriod, "Base period of the full relist that repairs caches (jittered up by 20%)")
}
