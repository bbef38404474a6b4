package clusterservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	sdk "github.com/openshift-online/ocm-sdk-go"
	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
)

// Provision shard statuses CS accepts on update. A new shard is always created in
// ShardStatusMaintenance and must be activated with a separate update.
const (
	ShardStatusActive      = "active"
	ShardStatusMaintenance = "maintenance"
	ShardStatusOffline     = "offline"
)

// MetricsSubsystem prefixes the OCM SDK's Cluster Service request metrics in every
// binary, so that one query covers the backend and the fleet; the scrape's job and pod
// labels tell them apart. The SDK appends the metric names below.
const MetricsSubsystem = "hcpsched_cluster_service"

// The request metrics the SDK registers under MetricsSubsystem, labelled apiservice,
// method, path (identifiers replaced by "-") and code (the HTTP status; 0 when no
// response came back: a refused connection or a timeout).
const (
	RequestCountMetric    = MetricsSubsystem + "_request_count"
	RequestDurationMetric = MetricsSubsystem + "_request_duration"
)

// Of is the connection a binary's controllers use: cfg from the flags, with the binary's
// user agent (hcpsched-<component>), its logger and its metrics registry, so that every
// binary's requests are named and counted alike.
func (cfg Config) Of(component string, logger *slog.Logger, reg prometheus.Registerer) Config {
	cfg.Agent = "hcpsched-" + component
	cfg.Logger = logger
	cfg.MetricsRegisterer = reg
	return cfg
}

// listPageSize is what CS defaults to; asking for it explicitly keeps the paging loop's
// arithmetic independent of server defaults.
const listPageSize = 100

// Clusters is what the backend needs from CS to place a hosted control plane and check
// where it landed.
type Clusters interface {
	// CreatePinnedCluster creates cluster, which must carry its pre-assigned id, pinned to
	// the provision shard shardID (a bare id).
	CreatePinnedCluster(ctx context.Context, cluster *arohcp.Cluster, shardID string) (*arohcp.Cluster, error)
	GetCluster(ctx context.Context, id string) (*arohcp.Cluster, error)
	// GetClusterProvisionShard reports where CS actually placed a cluster.
	GetClusterProvisionShard(ctx context.Context, clusterID string) (Placement, error)
	SearchClusters(ctx context.Context, identity AzureIdentity) ([]*arohcp.Cluster, error)
}

// ProvisionShards is what the fleet needs from CS to register management clusters.
type ProvisionShards interface {
	ListProvisionShards(ctx context.Context) ([]*arohcp.ProvisionShard, error)
	SearchProvisionShards(ctx context.Context, identity ShardIdentity) ([]*arohcp.ProvisionShard, error)
	GetProvisionShard(ctx context.Context, id string) (*arohcp.ProvisionShard, error)
	// CreateProvisionShard registers a shard; CS creates it in maintenance.
	CreateProvisionShard(ctx context.Context, shard *arohcp.ProvisionShard) (*arohcp.ProvisionShard, error)
	// SetProvisionShardStatus changes only the status of a shard.
	SetProvisionShardStatus(ctx context.Context, id, status string) (*arohcp.ProvisionShard, error)
	// ActivateProvisionShard is SetProvisionShardStatus(ctx, id, ShardStatusActive).
	ActivateProvisionShard(ctx context.Context, id string) (*arohcp.ProvisionShard, error)
}

// Interface is everything the client offers, for code that needs both halves.
type Interface interface {
	Clusters
	ProvisionShards
}

var _ Interface = (*Client)(nil)

// Placement is where CS put a cluster.
type Placement struct {
	// ShardID is the bare provision shard id, empty while CS has not placed the cluster.
	ShardID string
	// Shard is the shard as CS returned it; nil while the cluster is not placed.
	Shard *arohcp.ProvisionShard
}

// Placed reports whether CS has assigned the cluster to a shard.
func (p Placement) Placed() bool { return p.ShardID != "" }

// Config is how to reach CS.
type Config struct {
	// URL is CS's base URL, for example http://clusters-service:8000. Required.
	URL string

	// Token is an OpenID access token (a JWT) sent as a bearer token. The SDK treats a token
	// that is not a JWT as a refresh token and would try to exchange it, so that is refused.
	Token string
	// ClientID and ClientSecret enable the client-credentials grant against TokenURL,
	// which is then required: the SDK's default token URL is Red Hat SSO.
	ClientID     string
	ClientSecret string
	TokenURL     string

	// Insecure disables TLS certificate verification. Only ever set it from an explicit flag.
	Insecure bool

	// RetryLimit is how many times the SDK retries a request; zero means the SDK default
	// (2). RetryInterval is the first back-off, doubled per retry; zero means the SDK
	// default (1s). DisableRetries turns retries off.
	RetryLimit     int
	RetryInterval  time.Duration
	DisableRetries bool

	// Timeout bounds each request, token requests and the SDK's retries included; 0 is
	// DefaultTimeout.
	Timeout time.Duration

	// MetricsRegisterer, when set, receives the SDK's request metrics, always under
	// MetricsSubsystem (RequestCountMetric, RequestDurationMetric); nil exports none.
	MetricsRegisterer prometheus.Registerer

	// Agent is the User-Agent; empty means the SDK's.
	Agent string
	// Logger receives the SDK's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Client talks to CS through the OCM SDK connection.
type Client struct {
	conn    *sdk.Connection
	api     *arohcp.Client
	timeout time.Duration
}

// New connects to CS. No request is sent until a method is called.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("cluster service: URL is required")
	}
	var b *sdk.ConnectionBuilder
	switch {
	case cfg.Token != "" || cfg.ClientID != "" || cfg.ClientSecret != "":
		b = sdk.NewConnectionBuilder()
		if cfg.Token != "" {
			if strings.Count(cfg.Token, ".") != 2 {
				return nil, errors.New("cluster service: token is not a JWT access token")
			}
			b.Tokens(cfg.Token)
		}
		if cfg.ClientID != "" || cfg.ClientSecret != "" {
			if cfg.ClientID == "" || cfg.ClientSecret == "" || cfg.TokenURL == "" {
				return nil, errors.New("cluster service: client credentials need a client id, a secret and a token URL")
			}
			b.Client(cfg.ClientID, cfg.ClientSecret).TokenURL(cfg.TokenURL)
		}
	default:
		b = sdk.NewUnauthenticatedConnectionBuilder()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	b.URL(cfg.URL).Insecure(cfg.Insecure).Logger(slogAdapter{logger: logger})
	switch {
	case cfg.DisableRetries:
		b.RetryLimit(0)
	case cfg.RetryLimit > 0:
		b.RetryLimit(cfg.RetryLimit)
	}
	if cfg.RetryInterval > 0 {
		b.RetryInterval(cfg.RetryInterval)
	}
	if cfg.MetricsRegisterer != nil {
		b.MetricsSubsystem(MetricsSubsystem).MetricsRegisterer(cfg.MetricsRegisterer)
	}
	if cfg.Agent != "" {
		b.Agent(cfg.Agent)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	b.TransportWrapper(tuneTransport(timeout))
	conn, err := b.BuildContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster service: connect to %s: %w", cfg.URL, err)
	}
	return &Client{conn: conn, api: conn.AroHCP().V1alpha1(), timeout: timeout}, nil
}

// Close releases the connection's idle sockets and token refresher.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("cluster service: close: %w", err)
	}
	return nil
}

// CreatePinnedCluster posts cluster with provision_shard_id set to shardID. CS skips its
// capacity and shard-status checks for a pinned cluster and never changes the pin, so the
// shard may be in maintenance. A 409 (ErrConflict) on retry means the id already exists.
func (c *Client) CreatePinnedCluster(ctx context.Context, cluster *arohcp.Cluster, shardID string) (*arohcp.Cluster, error) {
	if cluster == nil {
		return nil, errors.New("create cluster: no cluster given")
	}
	id := cluster.ID()
	if err := ValidateClusterID(id); err != nil {
		return nil, fmt.Errorf("create cluster: the pre-assigned id is required: %w", err)
	}
	if err := ValidateShardID(shardID); err != nil {
		return nil, fmt.Errorf("create cluster %s: %w", id, err)
	}
	if pinned, ok := cluster.GetProvisionShardID(); ok && pinned != shardID {
		return nil, fmt.Errorf("create cluster %s: body is pinned to %q but the call pins to %q", id, pinned, shardID)
	}
	body := cluster
	if _, ok := cluster.GetProvisionShardID(); !ok {
		// Only an unpinned body is rebuilt: the SDK's Copy drops empty maps, and the
		// properties {} and empty operator maps ARO-HCP sends must reach CS as built.
		var err error
		body, err = arohcp.NewCluster().Copy(cluster).ProvisionShardID(shardID).Build()
		if err != nil {
			return nil, fmt.Errorf("create cluster %s: build body: %w", id, err)
		}
	}
	return send[*arohcp.Cluster](ctx, c, c.api.Clusters().Add().Body(body).SendContext,
		fmt.Sprintf("create cluster %s on shard %s", id, shardID))
}

var errEmptyBody = errors.New("cluster service answered without a body")

// bodyResponse is an SDK answer that carries one object.
type bodyResponse[T any] interface {
	sdkResponse
	GetBody() (T, bool)
}

// send makes one request under the client's deadline and returns the object its answer
// carries; call names the request in errors.
func send[T any, R bodyResponse[T]](ctx context.Context, c *Client, request func(context.Context) (R, error), call string) (T, error) {
	var none T
	reqCtx, cancel := c.withTimeout(ctx)
	resp, err := request(reqCtx)
	cancel()
	if err := checkResponse(resp, err); err != nil {
		return none, fmt.Errorf("%s: %w", call, err)
	}
	out, ok := resp.GetBody()
	if !ok {
		return none, fmt.Errorf("%s: %w", call, errEmptyBody)
	}
	return out, nil
}

// GetCluster fetches one cluster by its bare id.
func (c *Client) GetCluster(ctx context.Context, id string) (*arohcp.Cluster, error) {
	if err := validateClusterReference(id); err != nil {
		return nil, fmt.Errorf("get cluster: %w", err)
	}
	return send[*arohcp.Cluster](ctx, c, c.api.Clusters().Cluster(id).Get().SendContext, "get cluster "+id)
}

// GetClusterProvisionShard reads GET .../clusters/{id}/provision_shard. CS answers with an
// empty shard (no href) until it has placed the cluster; that is a zero Placement, not an
// error.
func (c *Client) GetClusterProvisionShard(ctx context.Context, clusterID string) (Placement, error) {
	if err := validateClusterReference(clusterID); err != nil {
		return Placement{}, fmt.Errorf("get provision shard of cluster: %w", err)
	}
	reqCtx, cancel := c.withTimeout(ctx)
	resp, err := c.api.Clusters().Cluster(clusterID).ProvisionShard().Get().SendContext(reqCtx)
	cancel()
	if err := checkResponse(resp, err); err != nil {
		return Placement{}, fmt.Errorf("get provision shard of cluster %s: %w", clusterID, err)
	}
	shard, ok := resp.GetBody()
	if !ok || shard.HREF() == "" {
		return Placement{}, nil
	}
	id, err := ParseShardHREF(shard.HREF())
	if err != nil {
		return Placement{}, fmt.Errorf("get provision shard of cluster %s: %w", clusterID, err)
	}
	if got, ok := shard.GetID(); ok && got != id {
		return Placement{}, fmt.Errorf("get provision shard of cluster %s: id %q disagrees with href %q",
			clusterID, got, shard.HREF())
	}
	return Placement{ShardID: id, Shard: shard}, nil
}

// SearchClusters lists the clusters with exactly this Azure identity; normally zero or one.
func (c *Client) SearchClusters(ctx context.Context, identity AzureIdentity) ([]*arohcp.Cluster, error) {
	expr, err := identity.SearchExpression()
	if err != nil {
		return nil, fmt.Errorf("search clusters: %w", err)
	}
	var out []*arohcp.Cluster
	for page := 1; ; page++ {
		reqCtx, cancel := c.withTimeout(ctx)
		resp, err := c.api.Clusters().List().Search(expr).Page(page).Size(listPageSize).SendContext(reqCtx)
		cancel()
		if err := checkResponse(resp, err); err != nil {
			return nil, fmt.Errorf("search clusters (%s) page %d: %w", expr, page, err)
		}
		if err := checkPage(resp, page); err != nil {
			return nil, fmt.Errorf("search clusters (%s): %w", expr, err)
		}
		items := resp.Items().Slice()
		out = append(out, items...)
		if len(items) == 0 || len(out) >= resp.Total() {
			return out, nil
		}
	}
}

// ListProvisionShards lists every provision shard CS knows.
func (c *Client) ListProvisionShards(ctx context.Context) ([]*arohcp.ProvisionShard, error) {
	out, err := c.listShards(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list provision shards: %w", err)
	}
	return out, nil
}

// SearchProvisionShards lists the shards with this AKS cluster and Maestro consumer;
// normally zero or one. CS compares the strings exactly, so pass the AKS resource id with
// the casing used when the shard was registered.
func (c *Client) SearchProvisionShards(ctx context.Context, identity ShardIdentity) ([]*arohcp.ProvisionShard, error) {
	expr, err := identity.SearchExpression()
	if err != nil {
		return nil, fmt.Errorf("search provision shards: %w", err)
	}
	out, err := c.listShards(ctx, expr)
	if err != nil {
		return nil, fmt.Errorf("search provision shards (%s): %w", expr, err)
	}
	return out, nil
}

func (c *Client) listShards(ctx context.Context, expr string) ([]*arohcp.ProvisionShard, error) {
	var out []*arohcp.ProvisionShard
	for page := 1; ; page++ {
		req := c.api.ProvisionShards().List().Page(page).Size(listPageSize)
		if expr != "" {
			req.Search(expr)
		}
		reqCtx, cancel := c.withTimeout(ctx)
		resp, err := req.SendContext(reqCtx)
		cancel()
		if err := checkResponse(resp, err); err != nil {
			return nil, fmt.Errorf("page %d: %w", page, err)
		}
		if err := checkPage(resp, page); err != nil {
			return nil, err
		}
		items := resp.Items().Slice()
		out = append(out, items...)
		if len(items) == 0 || len(out) >= resp.Total() {
			return out, nil
		}
	}
}

// checkPage refuses a list answer that does not say it is the page asked for. CS numbers
// every page it returns. Without the check, an empty 2xx (from a proxy, say) reads as an
// empty list, and a server that ignores the page parameter answers page 1 to every
// request: the loop would collect the same items again until their count reached the
// total, returning duplicates (one cluster seen as two) or, with a large total, never
// returning.
func checkPage(resp interface{ GetPage() (int, bool) }, asked int) error {
	got, ok := resp.GetPage()
	switch {
	case !ok:
		return fmt.Errorf("page %d: %w", asked, errNoPage)
	case got != asked:
		return fmt.Errorf("page %d: cluster service answered with page %d", asked, got)
	}
	return nil
}

var errNoPage = errors.New("cluster service answered without a page number")

// GetProvisionShard fetches one shard by its bare id.
func (c *Client) GetProvisionShard(ctx context.Context, id string) (*arohcp.ProvisionShard, error) {
	if err := ValidateShardID(id); err != nil {
		return nil, fmt.Errorf("get provision shard: %w", err)
	}
	return send[*arohcp.ProvisionShard](ctx, c, c.api.ProvisionShards().ProvisionShard(id).Get().SendContext, "get provision shard "+id)
}

// CreateProvisionShard registers shard. CS requires region, cloud_provider, topology
// ("shared"), all of azure_shard and all of maestro_config, and creates the shard in
// maintenance whatever status is sent; activate it afterwards. A 409 means the AKS cluster
// or the Maestro consumer is already registered: search for it instead.
func (c *Client) CreateProvisionShard(ctx context.Context, shard *arohcp.ProvisionShard) (*arohcp.ProvisionShard, error) {
	if shard == nil {
		return nil, errors.New("create provision shard: no shard given")
	}
	return send[*arohcp.ProvisionShard](ctx, c, c.api.ProvisionShards().Add().Body(shard).SendContext,
		"create provision shard for "+shard.AzureShard().AksManagementClusterResourceId())
}

// SetProvisionShardStatus sends a PATCH carrying only the status.
func (c *Client) SetProvisionShardStatus(ctx context.Context, id, status string) (*arohcp.ProvisionShard, error) {
	if err := ValidateShardID(id); err != nil {
		return nil, fmt.Errorf("set provision shard status: %w", err)
	}
	switch status {
	case ShardStatusActive, ShardStatusMaintenance, ShardStatusOffline:
	default:
		return nil, fmt.Errorf("set provision shard %s status: unknown status %q", id, status)
	}
	patch, err := arohcp.NewProvisionShard().Status(status).Build()
	if err != nil {
		return nil, fmt.Errorf("set provision shard %s status: build body: %w", id, err)
	}
	return send[*arohcp.ProvisionShard](ctx, c, c.api.ProvisionShards().ProvisionShard(id).Update().Body(patch).SendContext,
		fmt.Sprintf("set provision shard %s status to %s", id, status))
}

// ActivateProvisionShard makes a shard eligible for CS's own (unpinned) placement.
func (c *Client) ActivateProvisionShard(ctx context.Context, id string) (*arohcp.ProvisionShard, error) {
	return c.SetProvisionShardStatus(ctx, id, ShardStatusActive)
}
