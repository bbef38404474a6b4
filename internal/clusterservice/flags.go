package clusterservice

import (
	"flag"

	"github.com/hcpsched/hcpsched/internal/durationflag"
)

// AddFlags registers the Cluster Service connection flags on fs, filling cfg. Secrets
// are better passed through their environment variables than on the command line.
func AddFlags(fs *flag.FlagSet, cfg *Config) {
	fs.StringVar(&cfg.URL, "clusters-service-url", cfg.URL, "Cluster Service base URL")
	fs.StringVar(&cfg.Token, "clusters-service-token", cfg.Token, "Cluster Service bearer token (a JWT); empty for none")
	fs.StringVar(&cfg.ClientID, "clusters-service-client-id", cfg.ClientID, "Client-credentials client ID for Cluster Service")
	fs.StringVar(&cfg.ClientSecret, "clusters-service-client-secret", cfg.ClientSecret, "Client-credentials secret for Cluster Service")
	fs.StringVar(&cfg.TokenURL, "clusters-service-token-url", cfg.TokenURL, "Token endpoint for the client-credentials grant")
	fs.BoolVar(&cfg.Insecure, "clusters-service-insecure", cfg.Insecure, "Skip TLS verification of Cluster Service (development only)")
	durationflag.Var(fs, &cfg.Timeout, timeoutFlag, DefaultTimeout,
		"Deadline of each Cluster Service request, its token request and the SDK's retries included")
}

const timeoutFlag = "clusters-service-timeout"

// Validate reports settings the flags cannot take, naming the flag.
func (c Config) Validate() error { return durationflag.Positive(timeoutFlag, c.Timeout) }
