package fakeclusterservice

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	"github.com/hcpsched/hcpsched/internal/api"
)

const adminPrefix = "/_fake/"

var (
	// ErrUnknownCluster is returned by the Go API for a cluster id the fake does not hold.
	ErrUnknownCluster = errors.New("unknown cluster")
	// ErrUnknownShard is returned by the Go API for a shard id the fake does not hold.
	ErrUnknownShard = errors.New("unknown provision shard")
)

// ClustersOnShard lists, in creation order, the clusters currently placed on a shard. It is
// the view a management cluster has of the hosted control planes it runs.
func (s *Server) ClustersOnShard(shardID string) ([]*arohcp.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.shards[shardID]; !ok {
		return nil, fmt.Errorf("list clusters on %q: %w", shardID, ErrUnknownShard)
	}
	var out []*arohcp.Cluster
	for _, id := range s.clusterOrder {
		if c := s.clusters[id]; c.ProvisionShardID() == shardID {
			out = append(out, c)
		}
	}
	return out, nil
}

// ResourceIDsOnShard lists, in creation order, the ARM resource IDs of the clusters
// currently placed on a shard (AzureResourceID; a cluster without one is left out): what a
// management cluster's simulator needs of the hosted control planes it runs, without the
// whole cluster encoded and decoded for every report.
func (s *Server) ResourceIDsOnShard(shardID string) ([]string, error) {
	clusters, err := s.ClustersOnShard(shardID)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(clusters))
	for _, c := range clusters {
		if rid, ok := AzureResourceID(c); ok {
			out = append(out, rid)
		}
	}
	return out, nil
}

// AzureResourceID is the ARM resource ID of a Cluster Service cluster, from its azure
// subscription, resource group and resource name.
func AzureResourceID(c *arohcp.Cluster) (string, bool) {
	a, ok := c.GetAzure()
	if !ok || a.SubscriptionID() == "" || a.ResourceGroupName() == "" || a.ResourceName() == "" {
		return "", false
	}
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/%s/%s",
		a.SubscriptionID(), a.ResourceGroupName(), api.ClusterResourceType, a.ResourceName()), true
}

// MisplaceOnCreate makes the next create of the cluster with this Azure resource name
// ignore its pin and land on another shard, the pin violation hcpsched must report. Real
// CS would do it only through a bug or an operator, so the fake does it only on request,
// and at creation, before anyone could have observed the pinned shard.
func (s *Server) MisplaceOnCreate(azureResourceName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.misplace == nil {
		s.misplace = map[string]bool{}
	}
	s.misplace[strings.ToLower(azureResourceName)] = true
}

// AcceptDuplicateNames decides whether a create may reuse the Azure identity of a cluster
// the fake already holds. CS refuses it (409), and so does the fake by default; but a
// client that POSTs one cluster twice then never shows two clusters, so a checker that
// counts them cannot fail. With on, the second create succeeds under its own id; a
// duplicate id is still a 409, since the id is the cluster's key.
func (s *Server) AcceptDuplicateNames(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acceptDuplicateNames = on
}

// RejectCreate makes every create of the cluster with this Azure resource name fail with
// a 400, as CS fails a cluster it finds invalid, until Reset: a cluster that was placed
// but never reaches its MC, whose reservation only hcpsched's own rules can release.
func (s *Server) RejectCreate(azureResourceName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reject == nil {
		s.reject = map[string]bool{}
	}
	s.reject[strings.ToLower(azureResourceName)] = true
}

// MoveCluster places a cluster on another shard behind the API's back, ignoring the pin and
// the shard's status, so that tests can produce the pin violation hcpsched must detect.
func (s *Server) MoveCluster(clusterID, shardID string) (*arohcp.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clusters[clusterID]
	if !ok {
		return nil, fmt.Errorf("move cluster %q: %w", clusterID, ErrUnknownCluster)
	}
	if _, ok := s.shards[shardID]; !ok {
		return nil, fmt.Errorf("move cluster %q to %q: %w", clusterID, shardID, ErrUnknownShard)
	}
	out, err := arohcp.NewCluster().Copy(c).ProvisionShardID(shardID).Build()
	if err != nil {
		return nil, fmt.Errorf("move cluster %q: %w", clusterID, err)
	}
	s.clusters[clusterID] = out
	s.logger.Info("cluster moved", "id", clusterID, "from", c.ProvisionShardID(), "to", shardID)
	return out, nil
}

// requestJSON is the admin endpoint's representation of a logged request.
type requestJSON struct {
	Time   time.Time   `json:"time"`
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Query  string      `json:"query,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Body   string      `json:"body,omitempty"`
	Status int         `json:"status"`
	Fault  string      `json:"fault,omitempty"`
}

// serveAdmin implements the HTTP form of the Go API for the standalone command:
//
//	GET    /_fake/healthz
//	GET    /_fake/requests                         request log
//	DELETE /_fake/requests                         empty the log
//	GET    /_fake/faults                           faults in force
//	POST   /_fake/faults                           inject one fault
//	DELETE /_fake/faults                           remove all faults
//	DELETE /_fake/faults/{id}                      remove one fault
//	GET    /_fake/provision_shards/{id}/resource_ids   ARM IDs of the clusters on a shard
//	POST   /_fake/clusters/{id}/move               body {"provision_shard_id": "..."}
//	POST   /_fake/reset                            forget everything
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, adminPrefix), "/")
	var err error
	switch {
	case len(parts) == 1 && parts[0] == "healthz" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case len(parts) == 1 && parts[0] == "requests" && r.Method == http.MethodGet:
		reqs := s.Requests()
		items := make([]requestJSON, 0, len(reqs))
		for _, q := range reqs {
			items = append(items, requestJSON(q))
		}
		writeJSON(w, http.StatusOK, map[string]any{"items": items})
	case len(parts) == 1 && parts[0] == "requests" && r.Method == http.MethodDelete:
		s.ResetRequests()
		writeRaw(w, http.StatusNoContent, "", nil)
	case len(parts) == 1 && parts[0] == "faults":
		err = s.adminFaults(w, r)
	case len(parts) == 2 && parts[0] == "faults" && r.Method == http.MethodDelete:
		if !s.RemoveFault(parts[1]) {
			err = notFound("fault '%s' not found", parts[1])
			break
		}
		writeRaw(w, http.StatusNoContent, "", nil)
	case len(parts) == 3 && parts[0] == "provision_shards" && parts[2] == "resource_ids" && r.Method == http.MethodGet:
		err = s.adminResourceIDsOnShard(w, parts[1])
	case len(parts) == 3 && parts[0] == "clusters" && parts[2] == "move" && r.Method == http.MethodPost:
		err = s.adminMove(w, r, parts[1])
	case len(parts) == 1 && parts[0] == "reset" && r.Method == http.MethodPost:
		s.Reset()
		writeRaw(w, http.StatusNoContent, "", nil)
	default:
		err = notFound("no admin endpoint %s %s", r.Method, r.URL.Path)
	}
	if err != nil {
		var apiErr *apiError
		if !errors.As(err, &apiErr) {
			apiErr = &apiError{status: http.StatusInternalServerError, reason: err.Error()}
		}
		writeError(w, s.logger, apiErr.status, apiErr.reason)
	}
}

func (s *Server) adminFaults(w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet:
		faults := s.Faults()
		items := make([]faultJSON, 0, len(faults))
		for _, f := range faults {
			items = append(items, faultToJSON(f))
		}
		writeJSON(w, http.StatusOK, map[string]any{"items": items})
	case http.MethodPost:
		var j faultJSON
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return badRequest("fault: %v", err)
		}
		f, err := j.fault()
		if err != nil {
			return badRequest("%v", err)
		}
		id, err := s.InjectFault(f)
		if err != nil {
			return badRequest("%v", err)
		}
		writeJSON(w, http.StatusCreated, faultToJSON(FaultInfo{ID: id, Fault: f}))
	case http.MethodDelete:
		s.ClearFaults()
		writeRaw(w, http.StatusNoContent, "", nil)
	default:
		return &apiError{status: http.StatusMethodNotAllowed, reason: "method not allowed on faults"}
	}
	return nil
}

func (s *Server) adminResourceIDsOnShard(w http.ResponseWriter, shardID string) error {
	ids, err := s.ResourceIDsOnShard(shardID)
	if errors.Is(err, ErrUnknownShard) {
		return notFound("provision shard '%s' not found", shardID)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string][]string{"items": ids})
	return nil
}

func (s *Server) adminMove(w http.ResponseWriter, r *http.Request, clusterID string) error {
	var body struct {
		ProvisionShardID string `json:"provision_shard_id"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return badRequest("move: %v", err)
	}
	c, err := s.MoveCluster(clusterID, body.ProvisionShardID)
	switch {
	case errors.Is(err, ErrUnknownCluster):
		return notFound("cluster '%s' not found", clusterID)
	case errors.Is(err, ErrUnknownShard):
		return badRequest("provision shard '%s' does not exist", body.ProvisionShardID)
	case err != nil:
		return err
	}
	return writeObject(w, http.StatusOK, arohcp.MarshalCluster, c)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		body = []byte(`{}`)
		status = http.StatusInternalServerError
	}
	writeRaw(w, status, "application/json", body)
}
