package mcsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Config wires a Simulator.
type Config struct {
	Store database.Store
	// ClusterServiceURL is the fake Cluster Service; its admin endpoint lists the clusters
	// on a provision shard, which is what an MC sees of the HCPs it runs.
	ClusterServiceURL string
	HTTPClient        *http.Client
	// ProfileFor gives each MC its nodes; nil means DefaultProfile for every MC.
	ProfileFor    func(mc *api.ResourceID) Profile
	NotReadyDelay time.Duration
	Logger        *slog.Logger
	Now           func() time.Time
}

// Simulator writes, for every registered MC, the capacity ReadDesire's status the MC's
// agent and kube-applier would write.
type Simulator struct {
	cfg Config

	mu sync.Mutex
	// firstSeen is when each HCP (lowercased resource ID) first appeared on its MC; its
	// replicas start over NotReadyDelay, and then it is ready.
	firstSeen map[string]time.Time
	// kinds caches what each cluster's document says of its HCP, which never changes.
	kinds map[string]kind

	skippedMu sync.Mutex
	// skipped is the _etag of each document (by Cosmos id) skipped as malformed, so that
	// each version of one is logged once rather than on every pass.
	skipped map[string]string
}

// DefaultRequestTimeout bounds each request to the fake Cluster Service when Config sets
// no HTTPClient: a listing that never answers must not stall every MC's report.
const DefaultRequestTimeout = 10 * time.Second

// New returns a simulator; zero fields of cfg take their defaults.
func New(cfg Config) *Simulator {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultRequestTimeout}
	}
	if cfg.ProfileFor == nil {
		cfg.ProfileFor = func(*api.ResourceID) Profile { return DefaultProfile() }
	}
	if cfg.NotReadyDelay < 0 {
		cfg.NotReadyDelay = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Simulator{cfg: cfg, firstSeen: map[string]time.Time{}, kinds: map[string]kind{}, skipped: map[string]string{}}
}

// kind is what a cluster's document says of its HCP: a real MC knows it from the
// HostedCluster, which CS does not expose.
type kind struct {
	singleReplica, swift bool
	// etag is the version of the cluster document the kind was read from.
	etag string
}

// unknownKind is the HCP of a cluster without a readable document: SWIFT HA, the dearer
// kind, as placement charges a cluster it cannot read.
var unknownKind = kind{swift: true}

// Run reports every interval until ctx ends. A failed pass is logged and retried on the
// next tick, as the real agent does.
func (s *Simulator) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("capacity report pass failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sync writes one report for every MC that has a provision shard and a capacity
// ReadDesire; MCs the fleet has not set up yet are skipped until a later pass.
func (s *Simulator) Sync(ctx context.Context) error {
	var errs []error
	for item, err := range s.cfg.Store.Container(api.FleetContainer).List(ctx, database.ListOptions{ResourceType: api.ManagementClusterResourceType}) {
		if err != nil {
			return fmt.Errorf("listing management clusters: %w", err)
		}
		mc, err := database.DecodeItem[api.ManagementClusterProperties](item)
		if err != nil {
			s.skip("management cluster", item, err)
			continue
		}
		if mc.IsDeleted() {
			continue
		}
		if err := s.report(ctx, mc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Simulator) report(ctx context.Context, mc *api.ManagementCluster) error {
	mcID, err := mc.ParsedResourceID()
	if err != nil {
		return err
	}
	st := mc.Properties.Status
	if st == nil || st.ClusterServiceProvisionShardID == "" || st.KubeApplierCosmosContainerName == "" {
		return nil
	}
	shardID, err := clusterservice.ParseShardHREF(st.ClusterServiceProvisionShardID)
	if err != nil {
		return fmt.Errorf("management cluster %s: %w", mcID, err)
	}
	hcps, err := s.hcps(ctx, shardID)
	if err != nil {
		return fmt.Errorf("management cluster %s: %w", mcID, err)
	}
	report, err := BuildReport(s.cfg.ProfileFor(mcID), hcps, s.cfg.Now().UTC().Truncate(time.Second))
	if err != nil {
		return fmt.Errorf("management cluster %s: %w", mcID, err)
	}
	return s.write(ctx, s.cfg.Store.Container(st.KubeApplierCosmosContainerName), mcID, report)
}

// write replaces the ReadDesire's status, as kube-applier does after reading the CR. The
// ReadDesire is the fleet's to create; until it exists there is nothing to write.
func (s *Simulator) write(ctx context.Context, c database.Container, mcID *api.ResourceID, report *api.CapacityReport) error {
	id := api.CapacityReadDesireResourceID(mcID)
	rd, err := database.Get[api.ReadDesireProperties](ctx, c, api.KubeApplierPartitionKey(mcID), id.String())
	if errors.Is(err, database.ErrNotFound) {
		s.cfg.Logger.Debug("capacity ReadDesire not created yet", "managementCluster", mcID.String())
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", id, err)
	}
	if rd.IsDeleted() {
		return nil
	}
	content, err := json.Marshal(report)
	if err != nil {
		return fmt.Errorf("encoding the capacity report of %s: %w", mcID, err)
	}
	if rd.Properties.Status == nil {
		rd.Properties.Status = &api.ReadDesireStatus{}
	}
	rd.Properties.Status.KubeContent = content
	api.SetCondition(&rd.Properties.Status.Conditions, api.Condition{
		Type: "Successful", Status: api.ConditionTrue, Reason: "NoErrors", Message: "As expected.",
	}, report.Status.LastReportedAt)
	_, err = database.Replace(ctx, c, rd)
	if errors.Is(err, database.ErrPreconditionFailed) {
		// Someone else wrote it between the read and the write; the next pass retries.
		return nil
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", id, err)
	}
	s.cfg.Logger.Debug("capacity report written", "managementCluster", mcID.String(),
		"ready", len(report.Status.HostedControlPlanes.ReadyResourceIDs),
		"notReady", len(report.Status.HostedControlPlanes.NotReadyResourceIDs),
		"swiftNICsUsed", report.Status.Usage[api.SwiftNIC])
	return nil
}

// hcps is what the MC runs: the fake Cluster Service's clusters on its shard, each as far
// into its start as its time on the MC takes it.
func (s *Simulator) hcps(ctx context.Context, shardID string) ([]HCP, error) {
	rids, err := ResourceIDsOnShard(ctx, s.cfg.HTTPClient, s.cfg.ClusterServiceURL, shardID)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []HCP
	var ages []time.Duration
	var unknown bool
	for _, rid := range rids {
		key := strings.ToLower(rid)
		first, seen := s.firstSeen[key]
		if !seen {
			first = now
			s.firstSeen[key] = now
		}
		if _, known := s.kinds[key]; !known {
			unknown = true
		}
		out = append(out, HCP{ResourceID: rid})
		ages = append(ages, now.Sub(first))
	}
	if unknown {
		if err := s.loadKinds(ctx); err != nil {
			return nil, err
		}
	}
	for i := range out {
		k, ok := s.kinds[strings.ToLower(out[i].ResourceID)]
		if !ok {
			k = unknownKind
		}
		out[i].SingleReplica, out[i].Swift = k.singleReplica, k.swift
		out[i].Ready = ages[i] >= s.cfg.NotReadyDelay
		out[i].StartedReplicas = StartedReplicas(out[i].Replicas(), ages[i], s.cfg.NotReadyDelay)
	}
	return out, nil
}

// loadKinds learns each cluster's kind from its HCPOpenShiftCluster document: single
// replica from serviceProviderProperties.experimentalFeatures.singleReplica, SWIFT from
// customerProperties.platform.vnetIntegrationSubnetId. Caller holds s.mu.
func (s *Simulator) loadKinds(ctx context.Context) error {
	for item, err := range s.cfg.Store.Container(api.ResourcesContainer).List(ctx, database.ListOptions{ResourceType: api.ClusterResourceType}) {
		if err != nil {
			return fmt.Errorf("listing clusters: %w", err)
		}
		// Only a cluster document not read before, or changed since, is decoded: a report
		// during a burst costs what changed, not the whole region.
		if _, rid, _ := api.Identify(item.Body); rid != "" {
			if k, known := s.kinds[strings.ToLower(rid)]; known && k.etag == item.ETag {
				continue
			}
		}
		// A document no decoder accepts says nothing about the others: skipping it keeps
		// every MC reporting (its HCP, if CS has one, counts as unknownKind).
		c, err := api.DecodeLean[api.ClusterProperties](item.Body)
		if err != nil {
			s.skip("cluster", item, err)
			continue
		}
		rid, err := c.ParsedResourceID()
		if err != nil {
			s.skip("cluster", item, err)
			continue
		}
		// The fields placement reads the kind from, read as placement reads them.
		pc := placement.ClusterOf(rid.String(), c)
		s.kinds[rid.Key()] = kind{singleReplica: pc.SingleReplica, swift: pc.Swift, etag: item.ETag}
	}
	return nil
}

// skip logs a malformed document the simulator passes over, once per version of it.
func (s *Simulator) skip(kind string, item database.Item, err error) {
	s.skippedMu.Lock()
	seen, ok := s.skipped[item.ID]
	s.skipped[item.ID] = item.ETag
	s.skippedMu.Unlock()
	if ok && seen == item.ETag {
		return
	}
	s.cfg.Logger.Warn("skipping a malformed "+kind+" document", "id", item.ID, "partitionKey", item.PartitionKey, "error", err.Error())
}

// ResourceIDsOnShard lists the ARM resource IDs of the clusters the fake Cluster Service
// at baseURL has on a provision shard, through its admin endpoint.
func ResourceIDsOnShard(ctx context.Context, client *http.Client, baseURL, shardID string) ([]string, error) {
	u := strings.TrimSuffix(baseURL, "/") + "/_fake/provision_shards/" + url.PathEscape(shardID) + "/resource_ids"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing the clusters on shard %s: %w", shardID, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("listing the clusters on shard %s: %w", shardID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing the clusters on shard %s: %s: %s", shardID, resp.Status, body)
	}
	var list struct {
		Items []string `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding the clusters on shard %s: %w", shardID, err)
	}
	return list.Items, nil
}
