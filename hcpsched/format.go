package main

import (
	"math"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// stampOf is the stamp identifier of an MC's resource ID, or the ID itself when it
// names no stamp.
func stampOf(mcID string) string {
	rid, err := api.ParseResourceID(mcID)
	if err != nil {
		return mcID
	}
	if stamp, ok := rid.Ancestor(api.StampResourceType); ok {
		return stamp.Name()
	}
	return mcID
}

// verdictText is an engine verdict as one line: the reason and its detail.
func verdictText(v placement.Verdict) string {
	if v.Reason == "" {
		return ""
	}
	if d := v.Detail(); d != "" {
		return string(v.Reason) + ": " + d
	}
	return string(v.Reason)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// list is a per-resource list in a table cell; "-" for what is unknown.
func list(values []string) string {
	if len(values) == 0 {
		return "-"
	}
	out := make([]string, len(values))
	for i, v := range values {
		if v == "" {
			v = "-"
		}
		out[i] = v
	}
	return strings.Join(out, ",")
}

// age is a duration in seconds as a table cell, to the second; "-" when absent.
func age(seconds *float64) string {
	switch {
	case seconds == nil:
		return "-"
	case math.IsInf(*seconds, 1):
		return "future-dated"
	}
	return (time.Duration(*seconds) * time.Second).String()
}
