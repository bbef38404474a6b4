package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
)

// CordonAttempts bounds how often cordon and uncordon read the MC again after losing
// the etag race (412) to another writer of the document, such as the fleet recording a
// registration condition. Each attempt is a fresh point read, so a few are enough for
// anything but a writer that changes the MC continuously, which is worth a failure.
const CordonAttempts = 5

// policyOwns is the one field cordon and uncordon write. docwrite refuses a change to
// any other, so every other field of the MC, known to hcpsched or not, is written back
// exactly as it was read.
var policyOwns = docwrite.Fields{"properties.spec.schedulingPolicy"}

func cordonVerb() verb {
	return verb{
		name:    "cordon",
		usage:   "cordon MC --reason TEXT",
		summary: "Set the management cluster's spec.schedulingPolicy to Unschedulable (an etag-guarded write of that field only): placement puts no new cluster there; clusters already there stay. MC is the stamp identifier or the MC's resource ID.",
		flags:   reasonFlag,
		minArgs: 1, maxArgs: 1,
		run: func(ctx context.Context, c *command, args []string) (result, error) {
			return c.setSchedulingPolicy(ctx, "cordon", args[0], api.Unschedulable)
		},
	}
}

func uncordonVerb() verb {
	return verb{
		name:    "uncordon",
		usage:   "uncordon MC --reason TEXT",
		summary: "Set the management cluster's spec.schedulingPolicy to Schedulable (an etag-guarded write of that field only): placement considers it again. MC is the stamp identifier or the MC's resource ID.",
		flags:   reasonFlag,
		minArgs: 1, maxArgs: 1,
		run: func(ctx context.Context, c *command, args []string) (result, error) {
			return c.setSchedulingPolicy(ctx, "uncordon", args[0], api.Schedulable)
		},
	}
}

func reasonFlag(fs *flag.FlagSet, o *verbOptions) {
	fs.StringVar(&o.reason, "reason", "", "Why (required), e.g. a ticket: printed and written to the JSON audit line on stderr. ARO-HCP's ManagementCluster has no field for it, so it is not stored")
}

// policyChange is what cordon or uncordon did.
type policyChange struct {
	Verb              string `json:"verb"`
	ManagementCluster string `json:"managementCluster"`
	Stamp             string `json:"stamp"`
	// OldPolicy is the policy as read; empty when the MC had none.
	OldPolicy string `json:"oldPolicy"`
	NewPolicy string `json:"newPolicy"`
	// Written is false when the MC already had NewPolicy: nothing was sent.
	Written bool `json:"written"`
	// InstanceVersion is the MC's write counter after the write, or as read.
	InstanceVersion int64 `json:"instanceVersion"`
	// Attempts counts the point reads: one more than the etag races lost.
	Attempts int    `json:"attempts"`
	Reason   string `json:"reason"`
	User     string `json:"user"`
	// ProvisionShard is the MC's Cluster Service provision shard, whose status the
	// fleet follows the policy with; empty while none is recorded.
	ProvisionShard string `json:"provisionShard,omitempty"`
	// Effects say what the change sets off elsewhere, for the person who typed it.
	Effects []string `json:"effects"`
}

// setSchedulingPolicy writes want into the MC's spec.schedulingPolicy.
//
// It reads the MC with a point read, not from a cache: the command lives for one
// write, so a cache would have to list the whole Fleet container to learn one
// document's etag, and would be no fresher than the point read. The point read's etag
// is the If-Match of the write, exactly as a controller's cached copy is; a lost race
// is read again, up to CordonAttempts times.
func (c *command) setSchedulingPolicy(ctx context.Context, verbName, arg, want string) (result, error) {
	reason := strings.TrimSpace(c.opts.reason)
	if reason == "" {
		return nil, usagef(`--reason is required and must not be empty: say why, e.g. --reason "AKS upgrade, INC-1234"`)
	}
	rid, err := parseManagementClusterArg(arg)
	if err != nil {
		return nil, err
	}
	pk, err := api.FleetPartitionKey(rid)
	if err != nil {
		return nil, usagef("management cluster %q: %v", arg, err)
	}
	store, err := c.store(ctx)
	if err != nil {
		return nil, err
	}
	fleet := store.Container(api.FleetContainer)
	writer := docwrite.New(fleet, docwrite.NoCache[api.ManagementClusterProperties]{})
	for attempt := 1; attempt <= CordonAttempts; attempt++ {
		doc, err := database.Get[api.ManagementClusterProperties](ctx, fleet, pk, rid.String())
		if errors.Is(err, database.ErrNotFound) || (err == nil && doc.IsDeleted()) {
			return nil, unknownManagementCluster(ctx, fleet, arg)
		}
		if err != nil {
			return nil, fmt.Errorf("reading management cluster %s: %w", rid, err)
		}
		change := &policyChange{
			Verb:              verbName,
			ManagementCluster: doc.ResourceID,
			Stamp:             stampOf(doc.ResourceID),
			OldPolicy:         policyOf(doc),
			NewPolicy:         want,
			InstanceVersion:   doc.InstanceVersion(),
			Attempts:          attempt,
			Reason:            reason,
			User:              osUser(),
		}
		if st := doc.Properties.Status; st != nil {
			change.ProvisionShard = st.ClusterServiceProvisionShardID
		}
		if change.OldPolicy == want {
			change.Effects = []string{fmt.Sprintf("nothing changes: the management cluster is already %s", want)}
			c.audit(change)
			return change, nil
		}
		res, err := writer.Update(ctx, doc, policyOwns, func(d *api.ManagementCluster) error {
			if d.Properties.Spec == nil {
				d.Properties.Spec = &api.ManagementClusterSpec{}
			}
			d.Properties.Spec.SchedulingPolicy = want
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("writing spec.schedulingPolicy of %s: %w", doc.ResourceID, err)
		}
		if res.Outcome == docwrite.LostRace {
			continue
		}
		change.Written = res.Outcome == docwrite.Written
		if res.Stored != nil {
			change.InstanceVersion = res.Stored.InstanceVersion()
		}
		change.Effects = policyEffects(change)
		c.audit(change)
		return change, nil
	}
	return nil, fmt.Errorf("management cluster %s changed between every read and write (%d etag races lost); nothing was written: run the command again", rid, CordonAttempts)
}

func policyOf(mc *api.ManagementCluster) string {
	if mc.Properties.Spec != nil {
		return mc.Properties.Spec.SchedulingPolicy
	}
	return ""
}

// policyEffects say what a written policy sets off in hcpsched and Cluster Service.
func policyEffects(ch *policyChange) []string {
	name := "stamp " + ch.Stamp
	shard := "its Cluster Service provision shard " + ch.ProvisionShard
	if ch.ProvisionShard == "" {
		shard = "its Cluster Service provision shard (none is recorded yet: registration creates or adopts it first)"
	}
	if ch.NewPolicy == api.Unschedulable {
		return []string{
			fmt.Sprintf("placement (backend): puts no new cluster on %s; clusters waiting for capacity name it Unschedulable in their CapacityAvailable condition", name),
			fmt.Sprintf("placement (backend): clusters already placed or reserved on %s stay there and keep their capacity; cordon moves nothing (what would move: hcpsched drain-plan %s)", name, ch.Stamp),
			fmt.Sprintf("fleet: ClustersServiceRegistration sets %s to %s on its next pass, so Cluster Service's own placement avoids it too; hcpsched's creates of clusters already placed there are pinned to the shard and still go to it", shard, clusterservice.ShardStatusMaintenance),
			fmt.Sprintf("metrics: %s adds nothing to backend_region_headroom_hcps; hcpsched capacity shows it with POLICY Unschedulable and PLACEABLE \"no: Unschedulable: cordoned\"", name),
			"the reason is not stored (ARO-HCP's ManagementCluster has no field for it): keep the audit line this command printed on stderr",
		}
	}
	return []string{
		fmt.Sprintf("placement (backend): considers %s again for new clusters (it must also be Ready, with fresh capacity data and room); clusters waiting for capacity that fit there are woken at once", name),
		fmt.Sprintf("fleet: ClustersServiceRegistration sets %s to %s on its next pass, so Cluster Service may place there again", shard, clusterservice.ShardStatusActive),
		fmt.Sprintf("metrics: %s counts in backend_region_headroom_hcps again", name),
		"the reason is not stored (ARO-HCP's ManagementCluster has no field for it): keep the audit line this command printed on stderr",
	}
}

// audit writes the change as one JSON line on stderr: ARO-HCP's ManagementCluster has no
// field for who cordoned it or why, so this line is the record. Run through kubectl exec
// it lands on the SRE's terminal, and the Kubernetes audit log holds who ran the exec.
func (c *command) audit(ch *policyChange) {
	logger := slog.New(slog.NewJSONHandler(c.stderr, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Time(slog.TimeKey, c.deps.now().UTC())
			}
			return a
		},
	}))
	logger.Info("hcpsched audit: management cluster scheduling policy",
		"verb", ch.Verb,
		"managementCluster", ch.ManagementCluster,
		"stamp", ch.Stamp,
		"oldPolicy", ch.OldPolicy,
		"newPolicy", ch.NewPolicy,
		"written", ch.Written,
		"instanceVersion", ch.InstanceVersion,
		"reason", ch.Reason,
		"user", ch.User,
	)
}

// osUser is who runs the command, as the operating system knows them: in the backend's
// pod that is the container's user, not the SRE (the Kubernetes audit log of the exec
// names the SRE).
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}

func (ch *policyChange) table(w *tabwriter.Writer) {
	old := ch.OldPolicy
	if old == "" {
		old = "(none)"
	}
	row(w, "MANAGEMENT CLUSTER", ch.ManagementCluster)
	row(w, "STAMP", ch.Stamp)
	if ch.Written {
		row(w, "POLICY", old+" -> "+ch.NewPolicy)
		written := fmt.Sprintf("yes (instanceVersion %d", ch.InstanceVersion)
		if lost := ch.Attempts - 1; lost > 0 {
			written += fmt.Sprintf(", after %d lost etag race(s)", lost)
		}
		row(w, "WRITTEN", written+")")
	} else {
		row(w, "POLICY", ch.NewPolicy+" (unchanged)")
		row(w, "WRITTEN", "no: already "+ch.NewPolicy)
	}
	row(w, "REASON", ch.Reason)
	row(w, "USER", ch.User)
	shard := ch.ProvisionShard
	if shard == "" {
		shard = "-"
	}
	row(w, "PROVISION SHARD", shard)
	_ = w.Flush()
	fmt.Fprintln(w, "\nWhat follows:")
	for _, e := range ch.Effects {
		fmt.Fprintf(w, "- %s\n", e)
	}
}

// unknownManagementCluster is the not-found error for arg, listing the stamps the Fleet
// container has an MC for, so that a typo is seen at once.
func unknownManagementCluster(ctx context.Context, fleet database.Container, arg string) error {
	mcs, err := database.ListDecoded[api.ManagementClusterProperties](ctx, fleet, api.ManagementClusterResourceType)
	if err != nil {
		return fmt.Errorf("management cluster %q: %w (and listing the known ones failed: %v)", arg, errNotFound, err)
	}
	var stamps []string
	for _, mc := range mcs {
		if !mc.IsDeleted() {
			stamps = append(stamps, stampOf(mc.ResourceID))
		}
	}
	return notFoundAmong(arg, stamps)
}
