package process

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hcpsched/hcpsched/internal/durationflag"
)

// Every default of the shell, in one place: the flags, NewOptions and the generated
// configuration reference all read them from here.
const (
	DefaultMetricsAddress  = ":8080"
	DefaultHealthAddress   = ":8081"
	DefaultLogLevel        = slog.LevelInfo
	DefaultLeaderElect     = true
	DefaultLeaseDuration   = 15 * time.Second
	DefaultRenewDeadline   = 10 * time.Second
	DefaultRetryPeriod     = 2 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultLeaseNamePrefix is prepended to the component name to name its Lease, so
	// the backend and fleet binaries never compete for the same one.
	DefaultLeaseNamePrefix = "hcpsched-"
)

// Options configures the shell. Build it with NewOptions so the defaults apply, then
// bind it to a FlagSet with AddFlags.
type Options struct {
	// Component names the binary ("backend", "fleet"); it is not a flag. It names the
	// default Lease and is sent as the Kubernetes user agent.
	Component string

	MetricsAddress string
	HealthAddress  string
	LogLevel       slog.Level
	// Profiling serves Go's /debug/pprof/ endpoints on the metrics server, so an
	// operator can take a CPU or heap profile of a live process. Off by default: a
	// profile costs CPU while it runs and shows internals.
	Profiling bool

	LeaderElect                 bool
	LeaderElectionNamespace     string
	LeaderElectionLeaseName     string
	LeaderElectionIdentity      string
	LeaderElectionLeaseDuration time.Duration
	LeaderElectionRenewDeadline time.Duration
	LeaderElectionRetryPeriod   time.Duration
	Kubeconfig                  string
	ShutdownTimeout             time.Duration
	// Sharding is leaderless mode's split of the keys (sharding.go).
	Sharding ShardingOptions

	// KubeClient, when set, is used for leader election instead of a client built from
	// Kubeconfig. Tests inject k8s.io/client-go/kubernetes/fake here.
	KubeClient kubernetes.Interface
}

// NewOptions returns the defaults for a component. The identity defaults to the host
// name, which in a pod is the pod name: unique among replicas and readable in the Lease.
func NewOptions(component string) Options {
	hostname, _ := os.Hostname()
	return Options{
		Component:                   component,
		MetricsAddress:              DefaultMetricsAddress,
		HealthAddress:               DefaultHealthAddress,
		LogLevel:                    DefaultLogLevel,
		LeaderElect:                 DefaultLeaderElect,
		LeaderElectionLeaseName:     DefaultLeaseNamePrefix + component,
		LeaderElectionIdentity:      hostname,
		LeaderElectionLeaseDuration: DefaultLeaseDuration,
		LeaderElectionRenewDeadline: DefaultRenewDeadline,
		LeaderElectionRetryPeriod:   DefaultRetryPeriod,
		ShutdownTimeout:             DefaultShutdownTimeout,
		Sharding:                    defaultShardingOptions(),
	}
}

// AddFlags registers the shell's flags on fs, with o's current values as defaults.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddress, "metrics-address", o.MetricsAddress, "Address the Prometheus /metrics endpoint listens on.")
	fs.StringVar(&o.HealthAddress, "health-address", o.HealthAddress, "Address /healthz and /readyz listen on; may equal --metrics-address to share one server.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Serve Go's /debug/pprof/ profiles on the metrics server (CPU, heap, goroutines), for diagnosing a live process.")
	fs.Var((*levelValue)(&o.LogLevel), "log-level", "Minimum `level` logged: debug, info, warn or error.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run controllers only while holding the leader Lease; false runs them at once, on the keys of the shards this replica leases in Cosmos (see --shards; local runs and several replicas without Kubernetes).")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader Lease; empty means the pod's own namespace.")
	fs.StringVar(&o.LeaderElectionLeaseName, "leader-election-lease-name", o.LeaderElectionLeaseName, "Name of the leader Lease.")
	fs.StringVar(&o.LeaderElectionIdentity, "leader-election-identity", o.LeaderElectionIdentity, "Identity recorded in the Lease while leading; must be unique per replica (default: host name).")
	fs.DurationVar(&o.LeaderElectionLeaseDuration, "leader-election-lease-duration", o.LeaderElectionLeaseDuration, "How long standbys wait after the last renewal before taking the Lease over.")
	fs.DurationVar(&o.LeaderElectionRenewDeadline, "leader-election-renew-deadline", o.LeaderElectionRenewDeadline, "How long the leader keeps retrying a renewal before giving leadership up.")
	fs.DurationVar(&o.LeaderElectionRetryPeriod, "leader-election-retry-period", o.LeaderElectionRetryPeriod, "Interval between attempts to acquire or renew the Lease.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig for leader election; empty uses the in-cluster service account.")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "How long controllers may drain and HTTP servers may finish after SIGTERM.")
	o.Sharding.addFlags(fs)
}

// Validate reports every invalid option at once, naming flags so an operator can fix
// the deployment without reading code.
func (o Options) Validate() error {
	var errs []error
	if o.MetricsAddress == "" {
		errs = append(errs, errors.New("--metrics-address must not be empty"))
	}
	if o.HealthAddress == "" {
		errs = append(errs, errors.New("--health-address must not be empty"))
	}
	if err := durationflag.Positive("shutdown-timeout", o.ShutdownTimeout); err != nil {
		errs = append(errs, err)
	}
	if !o.LeaderElect {
		errs = append(errs, o.Sharding.validate()...)
	}
	if o.LeaderElect {
		if o.LeaderElectionLeaseName == "" {
			errs = append(errs, errors.New("--leader-election-lease-name must not be empty"))
		}
		if o.LeaderElectionIdentity == "" {
			errs = append(errs, errors.New("--leader-election-identity must not be empty"))
		}
		// The same constraints client-go enforces, checked here to name the flags.
		if err := durationflag.Positive("leader-election-retry-period", o.LeaderElectionRetryPeriod); err != nil {
			errs = append(errs, err)
		}
		if o.LeaderElectionLeaseDuration <= o.LeaderElectionRenewDeadline {
			errs = append(errs, fmt.Errorf("--leader-election-lease-duration (%s) must be greater than --leader-election-renew-deadline (%s)",
				o.LeaderElectionLeaseDuration, o.LeaderElectionRenewDeadline))
		}
		if float64(o.LeaderElectionRenewDeadline) <= 1.2*float64(o.LeaderElectionRetryPeriod) {
			errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be greater than 1.2 × --leader-election-retry-period (%s)",
				o.LeaderElectionRenewDeadline, o.LeaderElectionRetryPeriod))
		}
		// The Lease stores whole seconds; a shorter duration would be written as 0 and
		// every standby would consider the lease expired at once.
		if o.LeaderElectionLeaseDuration < time.Second {
			errs = append(errs, fmt.Errorf("--leader-election-lease-duration must be at least 1s, got %s", o.LeaderElectionLeaseDuration))
		}
	}
	return errors.Join(errs...)
}
