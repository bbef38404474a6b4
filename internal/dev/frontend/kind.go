package frontend

import "github.com/hcpsched/hcpsched/internal/placement"

// Kind is what of a cluster decides the swift NICs its control plane takes on a
// management cluster. Under ARO-HCP's placement rule a non-SWIFT cluster takes none, a
// SWIFT single-replica one 1 and any other SWIFT cluster 3; the simulated MC's pods
// request them so (package mcsim).
type Kind struct {
	// Swift is a cluster with a vnet-integration subnet
	// (properties.customerProperties.platform.vnetIntegrationSubnetId): its control
	// plane's pods take swift NICs on the MC.
	Swift bool
	// SingleReplica is serviceProviderProperties.experimentalFeatures.singleReplica =
	// SingleReplica: one control-plane replica instead of three.
	SingleReplica bool
}

// Mix chooses the kind of each cluster a local run generates from the cluster's index n
// (from 1), so that every run creates the same clusters: every SingleReplicaEvery-th is
// single-replica and every NonSwiftEvery-th has no vnet-integration subnet; 0 turns
// either off. The two choices are independent, so a cluster picked by both is a
// non-SWIFT single-replica one (no NICs, as a non-SWIFT HA one).
type Mix struct {
	SingleReplicaEvery int
	NonSwiftEvery      int
}

// Kind is cluster n's kind.
func (m Mix) Kind(n int) Kind {
	return Kind{
		Swift:         !every(n, m.NonSwiftEvery),
		SingleReplica: every(n, m.SingleReplicaEvery),
	}
}

func every(n, interval int) bool { return interval > 0 && n%interval == 0 }

// SwiftNICs is what a cluster of this kind's control plane costs of swift NICs under
// placement's default configuration: the engine's own rule (placement.Model.Cost), so
// that the local tools that size and draw MCs count as placement does.
func (k Kind) SwiftNICs() int64 {
	return defaultModel.Cost(placement.Cluster{Swift: k.Swift, SingleReplica: k.SingleReplica})[0] / 1000
}

var defaultModel = placement.NewModel(placement.DefaultConfig(), nil)
