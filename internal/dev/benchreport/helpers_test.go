package benchreport

import (
	"encoding/xml"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ms is shorthand for the hand-written latencies in the tables.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func durations(msValues ...int) []time.Duration {
	out := make([]time.Duration, len(msValues))
	for i, v := range msValues {
		out[i] = ms(v)
	}
	return out
}

// syntheticRun models the scenario as a queue: clusters are created at createRate per
// second and placed no faster than placeRate per second, each after a short service time
// (plus three emulator round trips). With placeRate below createRate a backlog builds,
// which is what makes the single-worker latencies spread over orders of magnitude.
func syntheticRun(store string, workers, n int, createRate, placeRate float64, added time.Duration, seed uint64) Run {
	rng := rand.New(rand.NewPCG(seed, 0))
	r := Run{
		Store:              store,
		Workers:            workers,
		ManagementClusters: 50,
		Clusters:           n,
		Placements:         n,
		AddedLatency:       added,
		Latencies:          make([]time.Duration, 0, n),
		PlacedAt:           make([]time.Duration, 0, n),
	}
	prev := 0.0
	for i := range n {
		created := float64(i) / createRate
		service := 0.002 + rng.ExpFloat64()*0.003 + 3*added.Seconds()
		placed := max(created+service, prev+rng.ExpFloat64()/placeRate)
		prev = placed
		r.Latencies = append(r.Latencies, time.Duration((placed-created)*float64(time.Second)))
		r.PlacedAt = append(r.PlacedAt, time.Duration(placed*float64(time.Second)))
	}
	// The runner reports in no particular order; neither should the fixture.
	rng.Shuffle(n, func(i, j int) { r.Latencies[i], r.Latencies[j] = r.Latencies[j], r.Latencies[i] })
	r.Elapsed = time.Duration(prev * float64(time.Second))
	r.Conflicts = float64(n) * 0.04 * float64(workers) / 20
	r.CosmosRequests = float64(n)*3.2 + r.Conflicts*2
	if store == "emulator" {
		r.RequestCharge = r.CosmosRequests * 6.1
	}
	r.PeakRSSBytes = 80<<20 + int64(n)*2048
	return r
}

// fourRuns is the scenario runner's full matrix at n clusters per run.
func fourRuns(n int) []Run {
	const added = 5 * time.Millisecond
	return []Run{
		syntheticRun("memory", 20, n, 3000, 2500, 0, 1),
		syntheticRun("memory", 1, n, 3000, 300, 0, 2),
		syntheticRun("emulator", 20, n, 3000, 900, added, 3),
		syntheticRun("emulator", 1, n, 3000, 60, added, 4),
	}
}

// node is a parsed XML element, enough of a DOM for the chart's assertions.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     string
}

// parseXML decodes the file token by token to EOF, failing the test on any malformed
// markup, and returns the root element.
func parseXML(t *testing.T, path string) *node {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := xml.NewDecoder(f)
	var root *node
	var stack []*node
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				require.Nil(t, root, "more than one root element")
				root = n
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		}
	}
	require.Empty(t, stack, "unclosed elements")
	require.NotNil(t, root, "no root element")
	return root
}

// find returns every element below n (n included) that matches.
func (n *node) find(match func(*node) bool) []*node {
	var out []*node
	if match(n) {
		out = append(out, n)
	}
	for _, c := range n.children {
		out = append(out, c.find(match)...)
	}
	return out
}

func (n *node) byID(id string) *node {
	found := n.find(func(c *node) bool { return c.attrs["id"] == id })
	if len(found) != 1 {
		return nil
	}
	return found[0]
}

func named(name string) func(*node) bool {
	return func(n *node) bool { return n.name == name }
}

// texts is the content of every text element below n, trimmed.
func (n *node) texts() []string {
	var out []string
	for _, t := range n.find(named("text")) {
		out = append(out, strings.TrimSpace(t.text))
	}
	return out
}
