package controllers

import (
	"net/http"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

const (
	testRegion = "westus3"
	// The identity and shard of the ARO-HCP fixture of management cluster 1.
	consumerOfStamp1 = "hcp-underlay-usw3-mgmt-1"
	shardOfStamp1    = "2lq3b6c1tq0h2o8k4mdsg7e5r9uvja1f"
	hrefOfStamp1     = "/api/aro_hcp/v1alpha1/provision_shards/" + shardOfStamp1
)

func newTestRegistration(e *env) *ClustersServiceRegistration {
	r := NewClustersServiceRegistration(e.inf, e.store, e.csAPI, testRegion)
	r.now = func() time.Time { return testNow }
	return r
}

// registerShard registers management cluster 1's shard in the fake CS, with the given id
// (empty: CS picks one) and status, and returns its id.
func (e *env) registerShard(id, status string) string {
	e.t.Helper()
	b := arohcp.NewProvisionShard().
		Region(arohcp.NewCloudRegion().ID(testRegion)).
		CloudProvider(arohcp.NewCloudProvider().ID("azure")).
		Topology("shared").
		AzureShard(arohcp.NewAzureShard().
			AksManagementClusterResourceId(aksOfStamp1).
			PublicDnsZoneResourceId("/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/global/providers/Microsoft.Network/dnszones/usw3.hcp.osadev.cloud").
			CxSecretsKeyVaultUrl("https://ah-dev-cx-usw3-1.vault.azure.net/").
			CxManagedIdentitiesKeyVaultUrl("https://ah-dev-mi-usw3-1.vault.azure.net/").
			CxSecretsKeyVaultManagedIdentityClientId("6f1c3a52-9d7e-4b1a-8c55-2f0e9d41b7a3")).
		MaestroConfig(arohcp.NewProvisionShardMaestroConfig().
			ConsumerName(consumerOfStamp1).
			RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url("http://maestro.maestro.svc.cluster.local:8000")).
			GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url("maestro-grpc.maestro.svc.cluster.local:8090")))
	if id != "" {
		b.ID(id)
	}
	body, err := b.Build()
	require.NoError(e.t, err)
	shard, err := e.csAPI.CreateProvisionShard(e.ctx, body)
	require.NoError(e.t, err)
	if status != clusterservice.ShardStatusMaintenance {
		_, err = e.csAPI.SetProvisionShardStatus(e.ctx, shard.ID(), status)
		require.NoError(e.t, err)
	}
	e.cs.ResetRequests()
	return shard.ID()
}

func (e *env) shards() []*arohcp.ProvisionShard {
	e.t.Helper()
	out, err := e.csAPI.ListProvisionShards(e.ctx)
	require.NoError(e.t, err)
	return out
}

func methods(reqs []fakeclusterservice.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method)
	}
	return out
}

func TestClustersServiceRegistration(t *testing.T) {
	t.Parallel()
	registered := condition(api.ManagementClusterConditionClustersServiceRegistered, "True", "Registered", "Registration successful", testNow)
	unregistered := []edit{{"properties.status.conditions", remove}, {"properties.status.clusterServiceProvisionShardID", remove}}
	tests := []struct {
		name    string
		seeds   []seed
		key     *api.ResourceID
		csShard string // status of an existing shard for MC 1; empty for none
		csID    string // its id; empty lets CS choose
		fault   *fakeclusterservice.Fault
		// wantCS are the CS methods called, in order.
		wantCS      []string
		wantStatus  string // the shard's status afterwards; empty: no shard
		wantErr     string
		writtenMC   func(href string) []edit // nil: the MC is not written
		wantNoShard bool
	}{
		{
			name:       "a new Schedulable management cluster gets an active shard",
			seeds:      []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, unregistered...)},
			wantCS:     []string{http.MethodGet, http.MethodPost, http.MethodPatch},
			wantStatus: clusterservice.ShardStatusActive,
			writtenMC: func(href string) []edit {
				return []edit{{"properties.status.clusterServiceProvisionShardID", href}, {"properties.status.conditions", []any{registered}}}
			},
		},
		{
			name:       "an Unschedulable one gets its shard left in maintenance",
			seeds:      []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, append(unregistered, edit{"properties.spec.schedulingPolicy", api.Unschedulable})...)},
			wantCS:     []string{http.MethodGet, http.MethodPost},
			wantStatus: clusterservice.ShardStatusMaintenance,
			writtenMC: func(href string) []edit {
				return []edit{{"properties.status.clusterServiceProvisionShardID", href}, {"properties.status.conditions", []any{registered}}}
			},
		},
		{
			name:       "a shard registered earlier (by a crashed pass or ARO-HCP) is found by AKS cluster and consumer and adopted",
			seeds:      []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, unregistered...)},
			csShard:    clusterservice.ShardStatusMaintenance,
			wantCS:     []string{http.MethodGet, http.MethodPatch},
			wantStatus: clusterservice.ShardStatusActive,
			writtenMC: func(href string) []edit {
				return []edit{{"properties.status.clusterServiceProvisionShardID", href}, {"properties.status.conditions", []any{registered}}}
			},
		},
		{
			name:       "registered and in line: one GET, nothing written",
			seeds:      []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1)},
			csShard:    clusterservice.ShardStatusActive,
			csID:       shardOfStamp1,
			wantCS:     []string{http.MethodGet},
			wantStatus: clusterservice.ShardStatusActive,
		},
		{
			name:       "cordoned: the recorded shard goes to maintenance; the document already says it all",
			seeds:      []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, edit{"properties.spec.schedulingPolicy", api.Unschedulable})},
			csShard:    clusterservice.ShardStatusActive,
			csID:       shardOfStamp1,
			wantCS:     []string{http.MethodGet, http.MethodPatch},
			wantStatus: clusterservice.ShardStatusMaintenance,
		},
		{
			name:  "ARO-HCP's revoked stamp: Cluster Service is left alone and CheckFailed stays",
			seeds: []seed{fleetDoc(fixtureStamp3), fleetDoc(fixtureMC3)},
			key:   mc3,
		},
		{
			name:  "a stamp never approved: RegistrationFailed, not an error",
			seeds: []seed{fleetDoc(fixtureStamp1, edit{"properties.status.conditions", remove}), fleetDoc(fixtureMC1, unregistered...)},
			writtenMC: func(string) []edit {
				return []edit{{"properties.status.conditions", []any{condition(api.ManagementClusterConditionClustersServiceRegistered, "False", "RegistrationFailed", "parent stamp is not approved", testNow)}}}
			},
			wantNoShard: true,
		},
		{
			name:    "a recorded shard that CS no longer has needs a human: CheckFailed, retried",
			seeds:   []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1)},
			wantCS:  []string{http.MethodGet},
			wantErr: "manual investigation required",
			writtenMC: func(string) []edit {
				return []edit{{"properties.status.conditions", []any{
					condition(api.ManagementClusterConditionClustersServiceRegistered, "True", "CheckFailed", "recorded provision shard "+shardOfStamp1+" does not exist in Cluster Service; manual investigation required", time.Date(2026, 8, 19, 14, 2, 40, 0, time.UTC)),
					condition("MaestroRegistered", "True", "Registered", "Registration successful", time.Date(2026, 8, 19, 14, 2, 41, 0, time.UTC)),
					condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", time.Date(2026, 8, 19, 14, 2, 43, 0, time.UTC)),
				}}}
			},
			wantNoShard: true,
		},
		{
			name:    "a field CS needs is missing: RegistrationFailed",
			seeds:   []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, append(unregistered, edit{"properties.status.maestroGRPCTarget", remove})...)},
			wantCS:  []string{http.MethodGet},
			wantErr: "status.maestroGRPCTarget is required",
			writtenMC: func(string) []edit {
				return []edit{{"properties.status.conditions", []any{condition(api.ManagementClusterConditionClustersServiceRegistered, "False", "RegistrationFailed", "status.maestroGRPCTarget is required to create a provision shard", testNow)}}}
			},
			wantNoShard: true,
		},
		{
			name:    "CS fails the create: RegistrationFailed, retried",
			seeds:   []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, unregistered...)},
			fault:   &fakeclusterservice.Fault{Method: http.MethodPost, Status: http.StatusInternalServerError, Count: 1},
			wantCS:  []string{http.MethodGet, http.MethodPost},
			wantErr: "500",
			writtenMC: func(string) []edit {
				return []edit{{"properties.status.conditions", []any{map[string]any{"type": api.ManagementClusterConditionClustersServiceRegistered, "status": "False", "reason": "RegistrationFailed"}}}}
			},
			wantNoShard: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := mc1
			if tc.key != nil {
				key = tc.key
			}
			e := newEnv(t, tc.seeds...)
			if tc.csShard != "" {
				e.registerShard(tc.csID, tc.csShard)
			}
			if tc.fault != nil {
				_, err := e.cs.InjectFault(*tc.fault)
				require.NoError(t, err)
			}
			before := e.item(api.FleetContainer, key)

			result, err := newTestRegistration(e).Reconcile(e.as(ClustersServiceRegistrationControllerName), key.Key())
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, controller.Result{}, result)
			assert.Equal(t, tc.wantCS, methods(e.cs.Requests()))

			shards := e.shards()
			var href string
			if tc.wantNoShard || tc.wantStatus == "" {
				assert.Empty(t, shards)
			} else {
				require.Len(t, shards, 1)
				assert.Equal(t, tc.wantStatus, shards[0].Status())
				assert.Equal(t, aksOfStamp1, shards[0].AzureShard().AksManagementClusterResourceId())
				assert.Equal(t, consumerOfStamp1, shards[0].MaestroConfig().ConsumerName())
				assert.Equal(t, testRegion, shards[0].Region().ID())
				href = shards[0].HREF()
			}

			after := e.item(api.FleetContainer, key)
			if tc.writtenMC == nil {
				assert.Equal(t, before.ETag, after.ETag, "the management cluster is not written")
				return
			}
			want := expectReplaced(t, before, tc.writtenMC(href)...)
			got := storedTree(t, after)
			if tc.fault != nil {
				// CS's error message carries an operation id: compare what is stable.
				conds := got["properties"].(map[string]any)["status"].(map[string]any)["conditions"].([]any)
				require.Len(t, conds, 1)
				c := conds[0].(map[string]any)
				assert.Contains(t, c["message"], "500")
				delete(c, "message")
				delete(c, "lastTransitionTime")
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestClustersServiceRegistrationWaitsForTheStamp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureMC1))
	result, err := newTestRegistration(e).Reconcile(e.as(ClustersServiceRegistrationControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, result, "the stamp's arrival brings the MC back")
	assert.Empty(t, e.cs.Requests())
	replaces, _ := e.store.writes()
	assert.Empty(t, replaces)
}

// A pass that loses the etag race after creating the shard (or crashes there) leaves a
// shard CS knows and the document does not; the next pass adopts it instead of creating a
// second one.
func TestClustersServiceRegistrationConflictAdoptsTheShardItCreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, edit{"properties.status.conditions", remove}, edit{"properties.status.clusterServiceProvisionShardID", remove}))
	r := newTestRegistration(e)
	e.loseNextReplace(api.FleetContainer, mc1, edit{"properties.status.futureField", "written by someone else"})
	result, err := r.Reconcile(e.as(ClustersServiceRegistrationControllerName), mc1.Key())
	require.NoError(t, err, "a 412 is not an error")
	assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, result)
	e.requireLostRace()
	shards := e.shards()
	require.Len(t, shards, 1)

	e.cs.ResetRequests()
	e.requireRetryWrites(ClustersServiceRegistrationControllerName, r.Reconcile, mc1.Key(), api.FleetContainer, mc1,
		edit{"properties.status.clusterServiceProvisionShardID", shards[0].HREF()},
		edit{"properties.status.conditions", []any{condition(api.ManagementClusterConditionClustersServiceRegistered, "True", "Registered", "Registration successful", testNow)}},
	)
	assert.Equal(t, []string{http.MethodGet}, methods(e.cs.Requests()), "found by search, already active")
	assert.Len(t, e.shards(), 1, "no second shard")
}
