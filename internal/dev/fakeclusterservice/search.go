package fakeclusterservice

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// CS accepts a SQL-like search language. The fake understands only the conjunctions of
// equalities that hcpsched's client sends, and answers 400 to anything else, so that a
// client change that CS might interpret differently shows up as a failing test.

type term struct {
	field string
	value string
}

// clusterSearchFields and shardSearchFields are the only field sets the fake accepts, each
// as a whole: the client always sends the full identity.
var (
	clusterSearchFields = []string{
		"azure.managed_resource_group_name",
		"azure.resource_group_name",
		"azure.resource_name",
		"azure.subscription_id",
		"azure.tenant_id",
	}
	shardSearchFields = []string{
		"azure_shard.aks_management_cluster_resource_id",
		"maestro_config.consumer_name",
	}
)

// parseSearch parses `field='value' and field='value' ...`. Values are single-quoted and
// may not contain quotes or backslashes: CS's escaping rules are not something the client
// relies on, so the fake does not guess at them.
func parseSearch(expr string) ([]term, error) {
	var terms []term
	rest := strings.TrimSpace(expr)
	if rest == "" {
		return nil, errors.New("empty search expression")
	}
	for {
		field, after, ok := cutField(rest)
		if !ok {
			return nil, fmt.Errorf("expected a field name at %q", rest)
		}
		after = strings.TrimLeft(after, " ")
		if !strings.HasPrefix(after, "=") {
			return nil, fmt.Errorf("expected '=' after %q", field)
		}
		after = strings.TrimLeft(after[1:], " ")
		if !strings.HasPrefix(after, "'") {
			return nil, fmt.Errorf("expected a quoted value for %q", field)
		}
		end := strings.IndexByte(after[1:], '\'')
		if end < 0 {
			return nil, fmt.Errorf("unterminated value for %q", field)
		}
		value := after[1 : 1+end]
		if strings.ContainsAny(value, `\`) {
			return nil, fmt.Errorf("value for %q contains a backslash", field)
		}
		terms = append(terms, term{field: field, value: value})
		rest = strings.TrimLeft(after[end+2:], " ")
		if rest == "" {
			return terms, nil
		}
		// The connective must be followed by a space; "andx" is not "and".
		if len(rest) < 4 || !strings.EqualFold(rest[:3], "and") || rest[3] != ' ' {
			return nil, fmt.Errorf("expected 'and' at %q", rest)
		}
		rest = strings.TrimLeft(rest[4:], " ")
	}
}

func cutField(s string) (field, rest string, ok bool) {
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' {
			i++
			continue
		}
		break
	}
	if i == 0 {
		return "", s, false
	}
	return s[:i], s[i:], true
}

// whitelisted parses expr and checks that it names exactly the allowed fields, once each.
func whitelisted(expr string, allowed []string) (map[string]string, error) {
	terms, err := parseSearch(expr)
	if err != nil {
		return nil, badRequest("unsupported search expression %q: %v", expr, err)
	}
	values := make(map[string]string, len(terms))
	for _, t := range terms {
		if _, dup := values[t.field]; dup {
			return nil, badRequest("unsupported search expression %q: field %q repeated", expr, t.field)
		}
		values[t.field] = t.value
	}
	got := make([]string, 0, len(values))
	for f := range values {
		got = append(got, f)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(allowed, ",") {
		return nil, badRequest("unsupported search expression %q: the fake accepts only %s",
			expr, strings.Join(allowed, ", "))
	}
	return values, nil
}
