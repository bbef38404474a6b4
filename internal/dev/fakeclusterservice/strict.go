package fakeclusterservice

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// The SDK's generated readers skip fields they do not know, so a misspelled
// "provison_shard_id" would be dropped and the cluster silently left unpinned. To refuse such
// bodies the fake decodes with the SDK, encodes the result again with the SDK, and requires
// every key of the original JSON to have survived the round trip.

func decodeCluster(body []byte) (*arohcp.Cluster, map[string]any, error) {
	return decodeStrict(body, arohcp.UnmarshalCluster, arohcp.MarshalCluster)
}

func decodeShard(body []byte) (*arohcp.ProvisionShard, map[string]any, error) {
	return decodeStrict(body, arohcp.UnmarshalProvisionShard, arohcp.MarshalProvisionShard)
}

// decodePatch decodes a PATCH body strictly and refuses it when it sets a field that
// cannot change; both errors are the API's.
func decodePatch[T any](body []byte, decode func([]byte) (T, map[string]any, error), immutable map[string]bool) (T, map[string]any, error) {
	var none T
	in, raw, err := decode(body)
	if err != nil {
		return none, nil, badRequest("%v", err)
	}
	if err := checkNotPresent(raw, immutable, ""); err != nil {
		return none, nil, err
	}
	return in, raw, nil
}

func decodeStrict[T any](
	body []byte,
	unmarshal func(any) (T, error),
	marshal func(T, io.Writer) error,
) (T, map[string]any, error) {
	var zero T
	raw, err := decodeRawObject(body)
	if err != nil {
		return zero, nil, err
	}
	obj, err := unmarshal(body)
	if err != nil {
		return zero, nil, fmt.Errorf("body does not match the API model: %w", err)
	}
	var buf bytes.Buffer
	if err := marshal(obj, &buf); err != nil {
		return zero, nil, fmt.Errorf("re-encode body: %w", err)
	}
	known, err := decodeRawObject(buf.Bytes())
	if err != nil {
		return zero, nil, fmt.Errorf("re-decode body: %w", err)
	}
	if path := firstUnknownField(raw, known, ""); path != "" {
		return zero, nil, fmt.Errorf("unknown field %q", path)
	}
	return obj, raw, nil
}

// decodeRawObject parses a JSON object with the standard library, which unlike the SDK's
// iterator rejects trailing data and non-object documents.
func decodeRawObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("body has data after the JSON document")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("body is not a JSON object")
	}
	return obj, nil
}

// firstUnknownField returns the dotted path of the first key in raw that has no counterpart
// in known, or "" when every key is accounted for. Keys are visited in sorted order so the
// reported field is deterministic.
func firstUnknownField(raw, known any, prefix string) string {
	switch r := raw.(type) {
	case map[string]any:
		k, ok := known.(map[string]any)
		if !ok {
			return prefixOrRoot(prefix)
		}
		keys := make([]string, 0, len(r))
		for key := range r {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			path := joinPath(prefix, key)
			kv, present := k[key]
			if !present {
				// The SDK reads "kind" and "href" of link lists ({"items": [...]}) but only
				// writes "items" back, so those two keys are legitimate there.
				if _, isList := k["items"]; isList && (key == "kind" || key == "href") {
					continue
				}
				return path
			}
			if p := firstUnknownField(r[key], kv, path); p != "" {
				return p
			}
		}
	case []any:
		k, ok := known.([]any)
		if !ok || len(k) != len(r) {
			return prefixOrRoot(prefix)
		}
		for i := range r {
			if p := firstUnknownField(r[i], k[i], prefix+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func prefixOrRoot(prefix string) string {
	if prefix == "" {
		return "."
	}
	return prefix
}

// checkNotPresent refuses a PATCH body that mentions any of the given dotted paths, or any
// field below them.
func checkNotPresent(raw map[string]any, fields map[string]bool, prefix string) error {
	keys := make([]string, 0, len(raw))
	for key := range raw {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		path := joinPath(prefix, key)
		if fields[path] {
			return badRequest("attribute %q cannot be updated", path)
		}
		if child, ok := raw[key].(map[string]any); ok {
			if err := checkNotPresent(child, fields, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeJSON applies a PATCH: objects merge recursively, anything else replaces.
func mergeJSON(dst, patch map[string]any) {
	for key, pv := range patch {
		if key == "kind" {
			continue
		}
		if pm, ok := pv.(map[string]any); ok {
			if dm, ok := dst[key].(map[string]any); ok {
				mergeJSON(dm, pm)
				continue
			}
		}
		dst[key] = pv
	}
}

// applyPatch merges patch into the JSON form of current and decodes the result with the
// SDK, so the stored object is always something the SDK itself produced.
func applyPatch[T any](
	current T,
	patch map[string]any,
	unmarshal func(any) (T, error),
	marshal func(T, io.Writer) error,
) (T, error) {
	var zero T
	var buf bytes.Buffer
	if err := marshal(current, &buf); err != nil {
		return zero, fmt.Errorf("encode stored object: %w", err)
	}
	doc, err := decodeRawObject(buf.Bytes())
	if err != nil {
		return zero, fmt.Errorf("decode stored object: %w", err)
	}
	mergeJSON(doc, patch)
	merged, err := json.Marshal(doc)
	if err != nil {
		return zero, fmt.Errorf("encode merged object: %w", err)
	}
	out, err := unmarshal(merged)
	if err != nil {
		return zero, fmt.Errorf("decode merged object: %w", err)
	}
	return out, nil
}
