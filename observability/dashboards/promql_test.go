package dashboards

// A reader of the PromQL the dashboard and the alerts use, so that their checks look at
// the expression's structure (what it selects, what labels its result keeps, in what
// unit) rather than at regular expressions over its text. It reads a subset of PromQL;
// anything outside it is an error, so a construct the checks cannot judge fails the test
// instead of passing unjudged. Teach it a construct when a query needs one.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

type node interface{}

type (
	numberNode struct{ text string }
	stringNode struct{ value string }
	parenNode  struct{ expr node }
	selector   struct {
		metric   string
		matchers []matcher
		// rng is the range of a range selector ("5m"), empty for an instant one.
		rng string
	}
	matcher struct{ label, op, value string }
	call    struct {
		fn   string
		args []node
	}
	aggregation struct {
		op       string
		grouping []string
		without  bool
		grouped  bool
		param    node
		expr     node
	}
	binary struct {
		op       string
		lhs, rhs node
		// returnBool is the bool modifier of a comparison.
		returnBool bool
		// on, ignoring and the group modifiers of vector matching.
		on, ignoring          bool
		matching              []string
		groupLeft, groupRight bool
		include               []string
	}
)

type token struct {
	kind string // ident, number, string, punct, op, range, eof
	text string
}

// variableRef is a Grafana variable in a query: $name, ${name}, ${name:format}, [[name]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)(?::\w+)?\]\]`)

// substituteVariables stands a number in for every variable outside a string, so that
// topk($top, ...) reads as PromQL; ranges are read as raw text, so [$__rate_interval]
// needs nothing. Inside strings (label matchers) variables stay as they are.
func substituteVariables(expr string) string {
	var out strings.Builder
	inString := rune(0)
	for i := 0; i < len(expr); i++ {
		c := rune(expr[i])
		switch {
		case inString != 0:
			if c == '\\' && i+1 < len(expr) {
				out.WriteByte(expr[i])
				i++
				out.WriteByte(expr[i])
				continue
			}
			if c == inString {
				inString = 0
			}
			out.WriteByte(expr[i])
		case c == '"' || c == '\'':
			inString = c
			out.WriteByte(expr[i])
		case c == '$' || (c == '[' && strings.HasPrefix(expr[i:], "[[")):
			loc := variableRef.FindStringIndex(expr[i:])
			if loc == nil || loc[0] != 0 {
				out.WriteByte(expr[i])
				continue
			}
			out.WriteString("1")
			i += loc[1] - 1
		default:
			out.WriteByte(expr[i])
		}
	}
	return out.String()
}

func tokenize(expr string) ([]token, error) {
	var toks []token
	for i := 0; i < len(expr); {
		c := rune(expr[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			j := i + 1
			var val strings.Builder
			for j < len(expr) && rune(expr[j]) != c {
				if expr[j] == '\\' && j+1 < len(expr) {
					j++
				}
				val.WriteByte(expr[j])
				j++
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{"string", val.String()})
			i = j + 1
		case c == '[':
			j := strings.IndexByte(expr[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unterminated range at %d", i)
			}
			toks = append(toks, token{"range", strings.TrimSpace(expr[i+1 : i+j])})
			i += j + 1
		case unicode.IsDigit(c) || (c == '.' && i+1 < len(expr) && unicode.IsDigit(rune(expr[i+1]))):
			j := i
			for j < len(expr) && (unicode.IsDigit(rune(expr[j])) || strings.ContainsRune(".eE", rune(expr[j])) ||
				((expr[j] == '+' || expr[j] == '-') && j > i && (expr[j-1] == 'e' || expr[j-1] == 'E'))) {
				j++
			}
			// A duration (offset 5m) reads as a number followed by its unit.
			for j < len(expr) && unicode.IsLetter(rune(expr[j])) {
				j++
			}
			toks = append(toks, token{"number", expr[i:j]})
			i = j
		case unicode.IsLetter(c) || c == '_' || c == ':':
			j := i
			for j < len(expr) && (unicode.IsLetter(rune(expr[j])) || unicode.IsDigit(rune(expr[j])) || expr[j] == '_' || expr[j] == ':') {
				j++
			}
			toks = append(toks, token{"ident", expr[i:j]})
			i = j
		case strings.ContainsRune("(){},", c):
			toks = append(toks, token{"punct", string(c)})
			i++
		default:
			matched := false
			for _, op := range []string{"==", "!=", "<=", ">=", "=~", "!~", "+", "-", "*", "/", "%", "^", "<", ">", "="} {
				if strings.HasPrefix(expr[i:], op) {
					toks = append(toks, token{"op", op})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				return nil, fmt.Errorf("unexpected %q at %d", c, i)
			}
		}
	}
	return append(toks, token{kind: "eof"}), nil
}

var aggregationOps = map[string]bool{"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true,
	"stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true}

type parser struct {
	toks []token
	pos  int
}

// parsePromQL reads expr, with its Grafana variables substituted.
func parsePromQL(expr string) (node, error) {
	toks, err := tokenize(substituteVariables(expr))
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != "eof" {
		return nil, fmt.Errorf("unexpected %q after the expression", t.text)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != "eof" {
		p.pos++
	}
	return t
}

func (p *parser) expect(kind, text string) error {
	if t := p.next(); t.kind != kind || t.text != text {
		return fmt.Errorf("expected %q, got %q", text, t.text)
	}
	return nil
}

var comparisons = map[string]bool{"==": true, "!=": true, "<=": true, ">=": true, "<": true, ">": true}

// precedence of binary operators, lowest first, as PromQL has them.
func precedence(t token) int {
	switch {
	case t.kind == "ident" && t.text == "or":
		return 1
	case t.kind == "ident" && (t.text == "and" || t.text == "unless"):
		return 2
	case t.kind == "op" && comparisons[t.text]:
		return 3
	case t.kind == "op" && (t.text == "+" || t.text == "-"):
		return 4
	case t.kind == "op" && (t.text == "*" || t.text == "/" || t.text == "%"):
		return 5
	case t.kind == "op" && t.text == "^":
		return 6
	}
	return 0
}

func (p *parser) expr(minPrec int) (node, error) {
	lhs, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec := precedence(t)
		if prec == 0 || prec <= minPrec {
			return lhs, nil
		}
		p.next()
		b := &binary{op: t.text, lhs: lhs}
		if p.peek().kind == "ident" && p.peek().text == "bool" {
			p.next()
			b.returnBool = true
		}
		if m := p.peek(); m.kind == "ident" && (m.text == "on" || m.text == "ignoring") {
			p.next()
			b.on, b.ignoring = m.text == "on", m.text == "ignoring"
			if b.matching, err = p.labelList(); err != nil {
				return nil, err
			}
		}
		if g := p.peek(); g.kind == "ident" && (g.text == "group_left" || g.text == "group_right") {
			p.next()
			b.groupLeft, b.groupRight = g.text == "group_left", g.text == "group_right"
			if p.peek().text == "(" {
				if b.include, err = p.labelList(); err != nil {
					return nil, err
				}
			}
		}
		// ^ is right-associative, every other operator left-associative.
		next := prec
		if t.text == "^" {
			next = prec - 1
		}
		if b.rhs, err = p.expr(next); err != nil {
			return nil, err
		}
		lhs = b
	}
}

func (p *parser) unary() (node, error) {
	if t := p.peek(); t.kind == "op" && (t.text == "-" || t.text == "+") {
		p.next()
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		if num, ok := n.(*numberNode); ok {
			return &numberNode{text: t.text + num.text}, nil
		}
		return &binary{op: "*", lhs: &numberNode{text: t.text + "1"}, rhs: n}, nil
	}
	return p.primary()
}

func (p *parser) labelList() ([]string, error) {
	if err := p.expect("punct", "("); err != nil {
		return nil, err
	}
	var out []string
	for p.peek().text != ")" {
		t := p.next()
		if t.kind != "ident" {
			return nil, fmt.Errorf("expected a label name, got %q", t.text)
		}
		out = append(out, t.text)
		if p.peek().text == "," {
			p.next()
		}
	}
	p.next()
	return out, nil
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case "number":
		return &numberNode{text: t.text}, nil
	case "string":
		return &stringNode{value: t.text}, nil
	case "punct":
		if t.text != "(" {
			return nil, fmt.Errorf("unexpected %q", t.text)
		}
		inner, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if err := p.expect("punct", ")"); err != nil {
			return nil, err
		}
		if p.peek().kind == "range" {
			return nil, fmt.Errorf("subqueries are not read by this check")
		}
		return &parenNode{expr: inner}, nil
	case "ident":
		if aggregationOps[t.text] && (p.peek().text == "(" || p.peek().text == "by" || p.peek().text == "without") {
			return p.aggregation(t.text)
		}
		if p.peek().text == "(" {
			p.next()
			c := &call{fn: t.text}
			for p.peek().text != ")" {
				arg, err := p.expr(0)
				if err != nil {
					return nil, err
				}
				c.args = append(c.args, arg)
				if p.peek().text == "," {
					p.next()
				} else if p.peek().text != ")" {
					return nil, fmt.Errorf("expected , or ) in %s(), got %q", t.text, p.peek().text)
				}
			}
			p.next()
			return c, nil
		}
		return p.selector(t.text)
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

func (p *parser) aggregation(op string) (node, error) {
	a := &aggregation{op: op}
	var err error
	readGrouping := func() error {
		if g := p.peek(); g.text == "by" || g.text == "without" {
			p.next()
			a.grouped, a.without = true, g.text == "without"
			a.grouping, err = p.labelList()
		}
		return err
	}
	if err := readGrouping(); err != nil {
		return nil, err
	}
	if err := p.expect("punct", "("); err != nil {
		return nil, err
	}
	first, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.peek().text == "," {
		p.next()
		a.param = first
		if a.expr, err = p.expr(0); err != nil {
			return nil, err
		}
	} else {
		a.expr = first
	}
	if err := p.expect("punct", ")"); err != nil {
		return nil, err
	}
	if !a.grouped {
		if err := readGrouping(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (p *parser) selector(metric string) (node, error) {
	s := &selector{metric: metric}
	if p.peek().text == "{" {
		p.next()
		for p.peek().text != "}" {
			label := p.next()
			op := p.next()
			value := p.next()
			if label.kind != "ident" || op.kind != "op" || value.kind != "string" {
				return nil, fmt.Errorf("bad label matcher in %s{...}", metric)
			}
			s.matchers = append(s.matchers, matcher{label.text, op.text, value.text})
			if p.peek().text == "," {
				p.next()
			}
		}
		p.next()
	}
	if p.peek().kind == "range" {
		s.rng = p.next().text
	}
	if p.peek().kind == "ident" && p.peek().text == "offset" {
		p.next()
		if t := p.next(); t.kind != "number" {
			return nil, fmt.Errorf("offset needs a duration, got %q", t.text)
		}
	}
	return s, nil
}

// selectors lists every selector of a tree.
func selectors(n node) []*selector {
	var out []*selector
	var walk func(node)
	walk = func(n node) {
		switch n := n.(type) {
		case *selector:
			out = append(out, n)
		case *parenNode:
			walk(n.expr)
		case *call:
			for _, a := range n.args {
				walk(a)
			}
		case *aggregation:
			if n.param != nil {
				walk(n.param)
			}
			walk(n.expr)
		case *binary:
			walk(n.lhs)
			walk(n.rhs)
		}
	}
	walk(n)
	return out
}

// Dimensions of a query's values, which a panel's unit must match.
const (
	dimSeconds   = "seconds"    // durations and ages
	dimTimestamp = "timestamp"  // Unix times: only ever plotted as an age (time() - x)
	dimCount     = "count"      // things: clusters, reservations, NICs, events in a window
	dimPerSecond = "per-second" // rates of counters
	dimRatio     = "ratio"      // a share, 0..1
	dimNone      = "none"       // a bare number, vector(0), a bool: fits any unit
)

// metricDimension says what a metric's samples measure, from the naming conventions
// the binaries follow (and the OCM SDK's _request_duration histogram, in seconds).
func metricDimension(name string) string {
	switch {
	case strings.HasSuffix(name, "_timestamp_seconds"), strings.HasSuffix(name, "_time_seconds"):
		return dimTimestamp
	case strings.HasSuffix(name, "_bucket"), strings.HasSuffix(name, "_count"), strings.HasSuffix(name, "_total"):
		return dimCount
	case strings.HasSuffix(name, "_seconds"), strings.HasSuffix(name, "_seconds_sum"), strings.HasSuffix(name, "_duration_sum"):
		return dimSeconds
	}
	return dimCount
}

// bucketDimension is the unit of a histogram's bucket bounds (le).
func bucketDimension(bucket string) (string, bool) {
	base, ok := strings.CutSuffix(bucket, "_bucket")
	if !ok {
		return "", false
	}
	if strings.HasSuffix(base, "_seconds") || strings.HasSuffix(base, "_duration") {
		return dimSeconds, true
	}
	return dimCount, true
}

// counterLike says whether rate() and increase() make sense of a metric.
func counterLike(name string) bool {
	for _, s := range []string{"_total", "_count", "_bucket", "_sum"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// result is what a (sub)expression yields.
type result struct {
	dim string
	// scalar: a number, time() or scalar(); it carries no labels.
	scalar bool
	// rangeVector: a range selector, valid only as a range function's argument.
	rangeVector bool
	// keeps are the high-cardinality labels the result can still carry (one series per
	// value); limited says its outermost operation is topk or bottomk.
	keeps   map[string]bool
	limited bool
}

// labelsOf says which labels a metric carries; highCardinality are the labels the
// per-MC check follows.
type labelsOf func(metric string) map[string]bool

var highCardinality = []string{mcLabel, "resource_id"}

const mcLabel = "management_cluster_resource_id"

func keepsOnly(keeps map[string]bool, labels []string, without bool) map[string]bool {
	in := map[string]bool{}
	for _, l := range labels {
		in[l] = true
	}
	out := map[string]bool{}
	for l := range keeps {
		if in[l] != without {
			out[l] = true
		}
	}
	return out
}

func union(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for l := range a {
		out[l] = true
	}
	for l := range b {
		out[l] = true
	}
	return out
}

func compatible(a, b string) bool { return a == b || a == dimNone || b == dimNone }

// analyze says what n yields, or why the checks cannot judge it.
func analyze(n node, labels labelsOf) (result, error) {
	switch n := n.(type) {
	case *numberNode:
		return result{dim: dimNone, scalar: true}, nil
	case *stringNode:
		return result{}, fmt.Errorf("a string (%q) is not a query", n.value)
	case *parenNode:
		return analyze(n.expr, labels)
	case *selector:
		keeps := map[string]bool{}
		have := labels(n.metric)
		for _, l := range highCardinality {
			if have[l] {
				keeps[l] = true
			}
		}
		return result{dim: metricDimension(n.metric), rangeVector: n.rng != "", keeps: keeps}, nil
	case *call:
		return analyzeCall(n, labels)
	case *aggregation:
		return analyzeAggregation(n, labels)
	case *binary:
		return analyzeBinary(n, labels)
	}
	return result{}, fmt.Errorf("unknown node %T", n)
}

// knownFunctions are the functions analyzeCall reads.
var knownFunctions = map[string]bool{"rate": true, "irate": true, "increase": true, "changes": true, "resets": true,
	"max_over_time": true, "min_over_time": true, "avg_over_time": true, "last_over_time": true, "histogram_quantile": true,
	"time": true, "vector": true, "scalar": true, "abs": true, "ceil": true, "floor": true, "round": true, "clamp": true,
	"clamp_min": true, "clamp_max": true, "sort": true, "sort_desc": true, "absent": true}

func analyzeCall(c *call, labels labelsOf) (result, error) {
	if !knownFunctions[c.fn] {
		return result{}, fmt.Errorf("function %s() is not read by this check: teach promql_test.go its unit and labels", c.fn)
	}
	var args []result
	for _, a := range c.args {
		r, err := analyze(a, labels)
		if err != nil {
			return result{}, err
		}
		args = append(args, r)
	}
	needRange := func() (result, error) {
		if len(args) != 1 || !args[0].rangeVector {
			return result{}, fmt.Errorf("%s() takes one range selector", c.fn)
		}
		return args[0], nil
	}
	counterArg := func() error {
		s, ok := c.args[0].(*selector)
		if !ok || !counterLike(s.metric) {
			return fmt.Errorf("%s() of something that is not a counter", c.fn)
		}
		return nil
	}
	switch c.fn {
	case "rate", "irate":
		r, err := needRange()
		if err != nil {
			return r, err
		}
		if err := counterArg(); err != nil {
			return r, err
		}
		if r.dim != dimCount {
			return result{}, fmt.Errorf("%s() of a %s counter is a ratio of units this check does not read", c.fn, r.dim)
		}
		return result{dim: dimPerSecond, keeps: r.keeps}, nil
	case "increase":
		r, err := needRange()
		if err != nil {
			return r, err
		}
		if err := counterArg(); err != nil {
			return r, err
		}
		return result{dim: r.dim, keeps: r.keeps}, nil
	case "changes", "resets":
		r, err := needRange()
		if err != nil {
			return r, err
		}
		return result{dim: dimCount, keeps: r.keeps}, nil
	case "max_over_time", "min_over_time", "avg_over_time", "last_over_time":
		r, err := needRange()
		if err != nil {
			return r, err
		}
		return result{dim: r.dim, keeps: r.keeps}, nil
	case "histogram_quantile":
		if len(args) != 2 || !args[0].scalar {
			return result{}, fmt.Errorf("histogram_quantile(q, buckets)")
		}
		dim := ""
		for _, s := range selectors(c.args[1]) {
			d, ok := bucketDimension(s.metric)
			if !ok || (dim != "" && d != dim) {
				return result{}, fmt.Errorf("histogram_quantile() over %s, which is not one histogram's buckets", s.metric)
			}
			dim = d
		}
		if dim == "" {
			return result{}, fmt.Errorf("histogram_quantile() over no buckets")
		}
		return result{dim: dim, keeps: args[1].keeps}, nil
	case "time":
		return result{dim: dimTimestamp, scalar: true}, nil
	case "vector":
		return result{dim: dimNone}, nil
	case "scalar":
		if len(args) != 1 {
			return result{}, fmt.Errorf("scalar() takes one argument")
		}
		return result{dim: args[0].dim, scalar: true}, nil
	case "abs", "ceil", "floor", "round", "clamp", "clamp_min", "clamp_max", "sort", "sort_desc":
		if len(args) == 0 || args[0].scalar || args[0].rangeVector {
			return result{}, fmt.Errorf("%s() needs an instant vector first", c.fn)
		}
		return args[0], nil
	}
	// absent
	return result{dim: dimNone}, nil
}

func analyzeAggregation(a *aggregation, labels labelsOf) (result, error) {
	inner, err := analyze(a.expr, labels)
	if err != nil {
		return result{}, err
	}
	if inner.scalar || inner.rangeVector {
		return result{}, fmt.Errorf("%s() of a scalar or a range", a.op)
	}
	keeps := map[string]bool{}
	if a.grouped {
		keeps = keepsOnly(inner.keeps, a.grouping, a.without)
	}
	switch a.op {
	case "topk", "bottomk", "limitk":
		if a.grouped {
			return result{}, fmt.Errorf("%s by (...) keeps N series per group: not read by this check", a.op)
		}
		return result{dim: inner.dim, keeps: inner.keeps, limited: true}, nil
	case "count":
		return result{dim: dimCount, keeps: keeps}, nil
	case "group":
		return result{dim: dimNone, keeps: keeps}, nil
	case "count_values":
		return result{}, fmt.Errorf("count_values is not read by this check")
	}
	return result{dim: inner.dim, keeps: keeps}, nil
}

func analyzeBinary(b *binary, labels labelsOf) (result, error) {
	l, err := analyze(b.lhs, labels)
	if err != nil {
		return result{}, err
	}
	r, err := analyze(b.rhs, labels)
	if err != nil {
		return result{}, err
	}
	if l.rangeVector || r.rangeVector {
		return result{}, fmt.Errorf("%s of a range selector", b.op)
	}
	switch b.op {
	case "and", "unless":
		return result{dim: l.dim, keeps: l.keeps, limited: l.limited}, nil
	case "or":
		if !compatible(l.dim, r.dim) {
			return result{}, fmt.Errorf("or of %s and %s", l.dim, r.dim)
		}
		dim := l.dim
		if dim == dimNone {
			dim = r.dim
		}
		limited := l.limited && (r.limited || len(r.keeps) == 0)
		return result{dim: dim, keeps: union(l.keeps, r.keeps), limited: limited}, nil
	}
	// Arithmetic and comparisons: the labels of the vector side, or what the matching
	// keeps of two vectors.
	var keeps map[string]bool
	limited := false
	switch {
	case l.scalar && r.scalar:
		keeps = map[string]bool{}
	case r.scalar:
		keeps, limited = l.keeps, l.limited
	case l.scalar:
		keeps, limited = r.keeps, r.limited
	case b.on && !b.groupLeft && !b.groupRight:
		keeps = keepsOnly(l.keeps, b.matching, false)
	case b.ignoring && !b.groupLeft && !b.groupRight:
		keeps = keepsOnly(l.keeps, b.matching, true)
	case b.groupLeft:
		keeps = union(l.keeps, keepsOnly(r.keeps, b.include, false))
	case b.groupRight:
		keeps = union(r.keeps, keepsOnly(l.keeps, b.include, false))
	default:
		keeps = l.keeps
	}
	if precedence(token{kind: "op", text: b.op}) == 3 {
		// A comparison filters; with bool it yields 0 or 1.
		if b.returnBool {
			return result{dim: dimNone, keeps: keeps, scalar: l.scalar && r.scalar}, nil
		}
		if l.scalar && !r.scalar {
			return result{dim: r.dim, keeps: keeps, limited: limited}, nil
		}
		return result{dim: l.dim, keeps: keeps, limited: limited, scalar: l.scalar && r.scalar}, nil
	}
	scalar := l.scalar && r.scalar
	switch b.op {
	case "+", "-":
		switch {
		case b.op == "-" && l.dim == dimTimestamp && r.dim == dimTimestamp:
			return result{dim: dimSeconds, keeps: keeps, limited: limited, scalar: scalar}, nil
		case l.dim == dimTimestamp && r.dim == dimSeconds:
			return result{dim: dimTimestamp, keeps: keeps, limited: limited, scalar: scalar}, nil
		case compatible(l.dim, r.dim):
			dim := l.dim
			if dim == dimNone {
				dim = r.dim
			}
			return result{dim: dim, keeps: keeps, limited: limited, scalar: scalar}, nil
		}
		return result{}, fmt.Errorf("%s %s %s mixes units", l.dim, b.op, r.dim)
	case "/":
		switch {
		case r.dim == dimNone && (l.dim == dimCount || l.dim == dimNone):
			return result{dim: l.dim, keeps: keeps, limited: limited, scalar: scalar}, nil
		case r.dim == dimNone:
			return result{}, fmt.Errorf("%s scaled by a constant hides its unit: let the panel's unit convert it", l.dim)
		case l.dim == r.dim:
			return result{dim: dimRatio, keeps: keeps, limited: limited, scalar: scalar}, nil
		}
		return result{}, fmt.Errorf("%s / %s is a unit this check does not read", l.dim, r.dim)
	case "*":
		switch {
		case l.dim == dimNone && (r.dim == dimCount || r.dim == dimNone):
			return result{dim: r.dim, keeps: keeps, limited: limited, scalar: scalar}, nil
		case r.dim == dimNone && l.dim == dimCount:
			return result{dim: l.dim, keeps: keeps, limited: limited, scalar: scalar}, nil
		}
		return result{}, fmt.Errorf("%s * %s is a unit this check does not read", l.dim, r.dim)
	}
	return result{}, fmt.Errorf("operator %s is not read by this check", b.op)
}
