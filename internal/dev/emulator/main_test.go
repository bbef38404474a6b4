package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/require"
)

// shared is one emulator for the package's tests and benchmarks; each test
// gets its own database and containers, so they do not interfere. Tests of
// the harness itself start their own.
var shared *Emulator

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runHelper()
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultStartTimeout)
	e, err := Start(ctx, Options{Log: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the Cosmos emulator: %v\n", err)
		os.Exit(1)
	}
	shared = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the Cosmos emulator: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func sharedClient(tb testing.TB) *azcosmos.Client {
	tb.Helper()
	c, err := shared.NewClient()
	require.NoError(tb, err)
	tb.Cleanup(c.Close)
	return c
}

var nameSeq atomic.Int64

// uniqueName returns a database or container id no other test uses: azcosmos
// caches container properties per endpoint and link across clients.
func uniqueName(tb testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(tb.Name())
	return fmt.Sprintf("%s-%d", strings.ToLower(name), nameSeq.Add(1))
}

type containerSpec struct {
	paths      []string // partition key paths; default /pk
	defaultTTL *int32
}

// newContainer creates a fresh database and container on the shared emulator.
func newContainer(tb testing.TB, client *azcosmos.Client, spec containerSpec) *azcosmos.ContainerClient {
	tb.Helper()
	_, c := newDatabaseAndContainer(tb, client, spec)
	return c
}

func newDatabaseAndContainer(tb testing.TB, client *azcosmos.Client, spec containerSpec) (*azcosmos.DatabaseClient, *azcosmos.ContainerClient) {
	tb.Helper()
	ctx := context.Background()
	dbID := uniqueName(tb)
	_, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: dbID}, nil)
	require.NoError(tb, err)
	db, err := client.NewDatabase(dbID)
	require.NoError(tb, err)
	paths := spec.paths
	if len(paths) == 0 {
		paths = []string{"/pk"}
	}
	kind := azcosmos.PartitionKeyKindHash
	if len(paths) > 1 {
		kind = azcosmos.PartitionKeyKindMultiHash
	}
	_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "items",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: paths, Kind: kind, Version: 2},
		DefaultTimeToLive:      spec.defaultTTL,
	}, nil)
	require.NoError(tb, err)
	c, err := db.NewContainer("items")
	require.NoError(tb, err)
	return db, c
}

// doc is the shape the tests store.
type doc struct {
	ID                string  `json:"id"`
	PK                string  `json:"pk"`
	ResourceType      string  `json:"resourceType,omitempty"`
	ResourceID        string  `json:"resourceID,omitempty"`
	Value             int     `json:"value"`
	DeletionTimestamp *string `json:"deletionTimestamp,omitempty"`
	TTL               *int    `json:"ttl,omitempty"`
	ETag              string  `json:"_etag,omitempty"`
	TS                int64   `json:"_ts,omitempty"`
	LSN               int64   `json:"_lsn,omitempty"`
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	return b
}

func decode(tb testing.TB, b []byte) doc {
	tb.Helper()
	var d doc
	require.NoError(tb, json.Unmarshal(b, &d), "decoding %s", b)
	return d
}

func ids(tb testing.TB, items [][]byte) []string {
	tb.Helper()
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, decode(tb, it).ID)
	}
	return out
}

func create(tb testing.TB, c *azcosmos.ContainerClient, d doc) azcosmos.ItemResponse {
	tb.Helper()
	resp, err := c.CreateItem(context.Background(), azcosmos.NewPartitionKeyString(d.PK), mustJSON(tb, d), nil)
	require.NoError(tb, err)
	return resp
}

// cosmosError is what the emulator reports in the body of a failure.
type cosmosError struct {
	StatusCode int
	Code       string `json:"code"`
	Message    string `json:"message"`
}

// asCosmosError unwraps an azcore.ResponseError and decodes Cosmos's JSON body.
func asCosmosError(tb testing.TB, err error) cosmosError {
	tb.Helper()
	require.Error(tb, err)
	var respErr *azcore.ResponseError
	require.True(tb, errors.As(err, &respErr), "want *azcore.ResponseError, got %T: %v", err, err)
	out := cosmosError{StatusCode: respErr.StatusCode}
	if respErr.RawResponse != nil && respErr.RawResponse.Body != nil {
		body, readErr := io.ReadAll(respErr.RawResponse.Body)
		require.NoError(tb, readErr)
		if len(body) > 0 {
			require.NoError(tb, json.Unmarshal(body, &out), "error body %s", body)
		}
	}
	return out
}

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// helperEnv turns the test binary into a parent process that starts an
// emulator, prints the server's pid and waits to be killed.
const helperEnv = "EMULATOR_TEST_HELPER"

func runHelper() {
	e, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(e.cmd.Process.Pid)
	select {}
}
