package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

func checkCopyEncodesIdentically[P any](t *testing.T, data []byte) bool {
	t.Helper()
	d, err := api.Decode[P](data)
	if err != nil {
		return false
	}
	want, err := api.Encode(d)
	require.NoError(t, err)
	c := d.DeepCopy()
	got, err := api.Encode(c)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Equal(t, d, c)
	assert.NotSame(t, d, c)
	return true
}

// Every ARO-HCP fixture, decoded as each type it decodes as, copies to a document that
// encodes to the very same bytes.
func TestDeepCopyOfFixturesEncodesIdentically(t *testing.T) {
	for _, f := range arohcp.All() {
		t.Run(f.Name, func(t *testing.T) {
			require.True(t, checkCopyEncodesIdentically[api.RawProperties](t, f.Data))
			checkCopyEncodesIdentically[api.ClusterProperties](t, f.Data)
			checkCopyEncodesIdentically[api.ServiceProviderClusterProperties](t, f.Data)
			checkCopyEncodesIdentically[api.ManagementClusterProperties](t, f.Data)
			checkCopyEncodesIdentically[api.ManagementClusterSchedulingProperties](t, f.Data)
			checkCopyEncodesIdentically[api.ReadDesireProperties](t, f.Data)
			checkCopyEncodesIdentically[api.StampProperties](t, f.Data)
			checkCopyEncodesIdentically[api.SubscriptionProperties](t, f.Data)
			checkCopyEncodesIdentically[api.HCPResourceRequirementsProperties](t, f.Data)
		})
	}
}

// Changing a copy never changes the original, nor the original the copy, at any level:
// pointers, slices and their elements, maps, nested levels and unknown fields.
func TestDeepCopyIsIndependent(t *testing.T) {
	const spcFixture = "constructed/serviceprovidercluster-placed-spec-and-status-managementcluster.json"
	const schedFixture = "constructed/fleet-scheduling-stamp-1-observed.json"
	const clusterFixture = "hcpcluster-accepted-with-tags.json"
	type mutation struct {
		name    string
		fixture string
		mutate  func(t *testing.T, d any)
		// prepare, if set, shapes the original before it is copied.
		prepare func(d any)
	}
	sched := func(d any) *api.ManagementClusterScheduling { return d.(*api.ManagementClusterScheduling) }
	cluster := func(d any) *api.Cluster { return d.(*api.Cluster) }
	spc := func(d any) *api.ServiceProviderCluster { return d.(*api.ServiceProviderCluster) }
	tests := []mutation{
		{"map entry", schedFixture, func(t *testing.T, d any) {
			sched(d).Properties.Status.ObservedResources.Capacity["cpu"] = "1"
		}, nil},
		{"map entry added", schedFixture, func(t *testing.T, d any) {
			sched(d).Properties.Status.ScaleCeiling.Capacity["new"] = "1"
		}, nil},
		{"slice element of a level", schedFixture, func(t *testing.T, d any) {
			sched(d).Properties.Status.Conditions[0].Status = "False"
		}, nil},
		{"condition set in place", schedFixture, func(t *testing.T, d any) {
			api.SetCondition(&sched(d).Properties.Status.Conditions, api.Condition{Type: sched(d).Properties.Status.Conditions[0].Type, Status: "False", Reason: "R"}, time.Unix(1, 0))
		}, nil},
		{"slice appended", schedFixture, func(t *testing.T, d any) {
			s := sched(d).Properties.Status
			s.PendingAssignedClusters = append(s.PendingAssignedClusters, "/x")
		}, nil},
		{"slice element of strings", schedFixture, func(t *testing.T, d any) {
			sched(d).Properties.Status.ReadyResourceIDs[0] = "changed"
		}, func(d any) {
			sched(d).Properties.Status.ReadyResourceIDs = []string{"/a", "/b"}
		}},
		{"slice with spare capacity appended", schedFixture, func(t *testing.T, d any) {
			s := sched(d).Properties.Status
			s.NotReadyResourceIDs = append(s.NotReadyResourceIDs, "/c")
		}, func(d any) {
			sched(d).Properties.Status.NotReadyResourceIDs = append(make([]string, 0, 8), "/a")
		}},
		{"nested pointer level", clusterFixture, func(t *testing.T, d any) {
			cluster(d).Properties.CustomerProperties.Etcd.DataEncryption.CustomerManaged.KMS.ActiveKey.Name = "other"
		}, nil},
		{"pointer to an integer", clusterFixture, func(t *testing.T, d any) {
			*cluster(d).Properties.CustomerProperties.Network.HostPrefix = 99
		}, nil},
		{"pointer set to nil", clusterFixture, func(t *testing.T, d any) {
			cluster(d).Properties.CustomerProperties.API = nil
		}, nil},
		{"owned field", clusterFixture, func(t *testing.T, d any) {
			cluster(d).Properties.ServiceProviderProperties.PendingClusterServiceID = "/api/x"
		}, nil},
		{"metadata stamped for a write", clusterFixture, func(t *testing.T, d any) {
			cluster(d).PrepareReplace()
		}, nil},
		{"unknown field on the envelope", clusterFixture, func(t *testing.T, d any) {
			cluster(d).SetUnknown("_rid", json.RawMessage(`"other"`))
		}, nil},
		{"unknown field added deep down", clusterFixture, func(t *testing.T, d any) {
			cluster(d).Properties.CustomerProperties.Platform.SetUnknown("newField", json.RawMessage(`1`))
		}, nil},
		{"time", spcFixture, func(t *testing.T, d any) {
			spc(d).Properties.Spec.ManagementClusterPlacementTime = time.Unix(5, 0).UTC()
		}, nil},
		{"soft delete", spcFixture, func(t *testing.T, d any) {
			spc(d).MarkDeleted(time.Unix(7, 0))
		}, nil},
	}
	decode := func(t *testing.T, fixture string) any {
		data := arohcp.Get(fixture)
		var d any
		var err error
		switch {
		case fixture == schedFixture:
			d, err = api.Decode[api.ManagementClusterSchedulingProperties](data)
		case fixture == clusterFixture:
			d, err = api.Decode[api.ClusterProperties](data)
		default:
			d, err = api.Decode[api.ServiceProviderClusterProperties](data)
		}
		require.NoError(t, err)
		return d
	}
	encode := func(t *testing.T, d any) string {
		var b []byte
		var err error
		switch d := d.(type) {
		case *api.ManagementClusterScheduling:
			b, err = api.Encode(d)
		case *api.Cluster:
			b, err = api.Encode(d)
		case *api.ServiceProviderCluster:
			b, err = api.Encode(d)
		}
		require.NoError(t, err)
		return string(b)
	}
	deepCopy := func(d any) any {
		switch d := d.(type) {
		case *api.ManagementClusterScheduling:
			return d.DeepCopy()
		case *api.Cluster:
			return d.DeepCopy()
		case *api.ServiceProviderCluster:
			return d.DeepCopy()
		}
		panic("unexpected type")
	}
	for _, tt := range tests {
		for _, which := range []string{"copy", "original"} {
			t.Run(tt.name+"/"+which, func(t *testing.T) {
				original := decode(t, tt.fixture)
				if tt.prepare != nil {
					tt.prepare(original)
				}
				c := deepCopy(original)
				before := encode(t, original)
				require.Equal(t, before, encode(t, c))
				changed, kept := c, original
				if which == "original" {
					changed, kept = original, c
				}
				tt.mutate(t, changed)
				assert.NotEqual(t, before, encode(t, changed), "the mutation changes the document")
				assert.Equal(t, before, encode(t, kept), "the other one is unchanged")
			})
		}
	}
}

// A copy is the same typed value, including what JSON would not carry: a lean document
// stays lean, an empty list stays an empty list rather than becoming nil, and monotonic
// clock readings survive.
func TestDeepCopyKeepsTheTypedValue(t *testing.T) {
	lean, err := api.DecodeLean[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-with-tags.json"))
	require.NoError(t, err)
	leanCopy := lean.DeepCopy()
	requireLean(t, leanCopy)
	assert.Equal(t, lean, leanCopy)

	id := api.MustParseResourceID("/providers/microsoft.redhatopenshift/stamps/7/managementclusters/default/scheduling/default")
	built := api.NewDocument(id, "7", api.ManagementClusterSchedulingProperties{Status: &api.SchedulingStatus{
		Conditions:              []api.Condition{},
		PendingAssignedClusters: []string{},
		ObservedResources:       &api.ObservedResources{Capacity: api.ResourceList{}, LastReportedAt: time.Now()},
	}})
	builtCopy := built.DeepCopy()
	assert.Equal(t, built, builtCopy)
	require.NotNil(t, builtCopy.Properties.Status.Conditions)
	assert.Empty(t, builtCopy.Properties.Status.Conditions)
	assert.NotNil(t, builtCopy.Properties.Status.PendingAssignedClusters)
	assert.NotNil(t, builtCopy.Properties.Status.ObservedResources.Capacity)

	var none *api.Cluster
	assert.Nil(t, none.DeepCopy())
}

// BenchmarkDeepCopy compares the typed copy with the copy through JSON it replaced
// (an Encode and a Decode), on a full and a lean cluster document.
func BenchmarkDeepCopy(b *testing.B) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	full, err := api.Decode[api.ClusterProperties](data)
	require.NoError(b, err)
	lean, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(b, err)
	for _, doc := range []struct {
		name string
		d    *api.Cluster
	}{{"full", full}, {"lean", lean}} {
		b.Run("json/"+doc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := api.Encode(doc.d)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := api.Decode[api.ClusterProperties](out); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("typed/"+doc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if doc.d.DeepCopy() == nil {
					b.Fatal("nil copy")
				}
			}
		})
	}
}
