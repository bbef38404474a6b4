package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// conditionSyntax is the subset of Cosmos filter predicates the memory store evaluates;
// anything else is refused, since evaluating it wrongly would let unit tests pass on
// behaviour Cosmos does not have.
const conditionSyntax = `FROM <alias> WHERE <term> [AND <term>]..., each term one of ` +
	`<path> = <literal>, <path> != <literal> (or <>), IS_DEFINED(<path>), NOT IS_DEFINED(<path>), ` +
	`ARRAY_CONTAINS(<path>, <literal>); a path is the alias followed by .name, ["name"] or [index]; ` +
	`a literal is a string ('...' or "..."), a number, true, false or null`

// condition is a parsed filter predicate: a conjunction of terms.
type condition struct {
	terms []term
}

type termKind int

const (
	termEqual termKind = iota
	termNotEqual
	termDefined
	termUndefined
	termArrayContains
)

type term struct {
	kind    termKind
	path    []any // string names and int indexes below the document root
	literal any   // string, float64, bool or nil
}

// parseCondition parses a filter predicate of the supported subset.
func parseCondition(text string) (*condition, error) {
	toks, err := tokenize(text)
	if err != nil {
		return nil, unsupportedCondition(text, err)
	}
	p := &condParser{toks: toks}
	c, err := p.parse()
	if err != nil {
		return nil, unsupportedCondition(text, err)
	}
	return c, nil
}

func unsupportedCondition(text string, err error) error {
	return fmt.Errorf("memory store: patch condition %q: %w; the memory store evaluates only %s", text, err, conditionSyntax)
}

// matches reports whether the predicate is true of doc. Cosmos compares values of
// different types, and anything with an undefined value, as undefined, which a WHERE
// treats as false: `c.x != 'a'` does not hold where c.x is missing or a number.
func (c *condition) matches(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return false
	}
	for _, t := range c.terms {
		v, defined := lookupPath(doc, t.path)
		var ok bool
		switch t.kind {
		case termDefined:
			ok = defined
		case termUndefined:
			ok = !defined
		case termEqual, termNotEqual:
			if !defined {
				return false
			}
			eq, comparable := scalarEqual(v, t.literal)
			ok = comparable && eq == (t.kind == termEqual)
		case termArrayContains:
			arr, isArray := v.([]any)
			if !defined || !isArray {
				return false
			}
			for _, el := range arr {
				if eq, comparable := scalarEqual(el, t.literal); comparable && eq {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func lookupPath(doc any, path []any) (any, bool) {
	v := doc
	for _, seg := range path {
		switch s := seg.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s]; !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || s < 0 || s >= len(a) {
				return nil, false
			}
			v = a[s]
		}
	}
	return v, true
}

// scalarEqual compares a document value with a literal; comparable is false when their
// types differ (Cosmos's undefined).
func scalarEqual(v, literal any) (eq, comparable bool) {
	switch l := literal.(type) {
	case nil:
		return v == nil, v == nil
	case string:
		s, ok := v.(string)
		return ok && s == l, ok
	case bool:
		b, ok := v.(bool)
		return ok && b == l, ok
	case float64:
		n, ok := v.(json.Number)
		if !ok {
			return false, false
		}
		f, err := n.Float64()
		return err == nil && f == l, err == nil
	}
	return false, false
}

type tokKind int

const (
	tokIdent tokKind = iota
	tokString
	tokNumber
	tokPunct
	tokEOF
)

type token struct {
	kind tokKind
	text string // identifier, punctuation, or the number's text
	str  string // a string literal's value
}

func tokenize(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		r := rune(s[i])
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '_' || unicode.IsLetter(r):
			j := i
			for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			toks = append(toks, token{kind: tokIdent, text: s[i:j]})
			i = j
		case r == '-' || unicode.IsDigit(r):
			j := i + 1
			for j < len(s) && strings.ContainsRune("0123456789.eE+-", rune(s[j])) {
				j++
			}
			if _, err := strconv.ParseFloat(s[i:j], 64); err != nil {
				return nil, fmt.Errorf("bad number %q", s[i:j])
			}
			toks = append(toks, token{kind: tokNumber, text: s[i:j]})
			i = j
		case r == '\'' || r == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != byte(r); j++ {
				if s[j] == '\\' {
					j++
					if j == len(s) {
						break
					}
					switch s[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(s[j])
					}
					continue
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string")
			}
			toks = append(toks, token{kind: tokString, str: b.String()})
			i = j + 1
		case strings.HasPrefix(s[i:], "!=") || strings.HasPrefix(s[i:], "<>"):
			toks = append(toks, token{kind: tokPunct, text: "!="})
			i += 2
		case strings.ContainsRune("()[].,=", r):
			toks = append(toks, token{kind: tokPunct, text: string(r)})
			i++
		default:
			return nil, fmt.Errorf("unsupported character %q", r)
		}
	}
	return append(toks, token{kind: tokEOF}), nil
}

type condParser struct {
	toks  []token
	pos   int
	alias string
}

func (p *condParser) peek() token { return p.toks[p.pos] }

func (p *condParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *condParser) keyword(word string) bool {
	if t := p.peek(); t.kind == tokIdent && strings.EqualFold(t.text, word) {
		p.pos++
		return true
	}
	return false
}

func (p *condParser) punct(s string) error {
	if t := p.next(); t.kind != tokPunct || t.text != s {
		return fmt.Errorf("expected %q, found %s", s, describe(t))
	}
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "the end"
	case tokString:
		return strconv.Quote(t.str)
	}
	return strconv.Quote(t.text)
}

func (p *condParser) parse() (*condition, error) {
	if !p.keyword("FROM") {
		return nil, fmt.Errorf("it must start with FROM")
	}
	alias := p.next()
	if alias.kind != tokIdent {
		return nil, fmt.Errorf("expected an alias after FROM, found %s", describe(alias))
	}
	p.alias = alias.text
	if !p.keyword("WHERE") {
		return nil, fmt.Errorf("expected WHERE after FROM %s", p.alias)
	}
	c := &condition{}
	for {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		c.terms = append(c.terms, t)
		if p.keyword("AND") {
			continue
		}
		if end := p.peek(); end.kind != tokEOF {
			return nil, fmt.Errorf("unsupported %s after a term", describe(end))
		}
		return c, nil
	}
}

func (p *condParser) term() (term, error) {
	switch {
	case p.keyword("NOT"):
		if !p.keyword("IS_DEFINED") {
			return term{}, fmt.Errorf("NOT is supported only before IS_DEFINED")
		}
		path, err := p.call()
		return term{kind: termUndefined, path: path}, err
	case p.keyword("IS_DEFINED"):
		path, err := p.call()
		return term{kind: termDefined, path: path}, err
	case p.keyword("ARRAY_CONTAINS"):
		if err := p.punct("("); err != nil {
			return term{}, err
		}
		path, err := p.path()
		if err != nil {
			return term{}, err
		}
		if err := p.punct(","); err != nil {
			return term{}, err
		}
		lit, err := p.literal()
		if err != nil {
			return term{}, err
		}
		if err := p.punct(")"); err != nil {
			return term{}, err
		}
		return term{kind: termArrayContains, path: path, literal: lit}, nil
	}
	path, err := p.path()
	if err != nil {
		return term{}, err
	}
	op := p.next()
	kind := termEqual
	switch {
	case op.kind == tokPunct && op.text == "=":
	case op.kind == tokPunct && op.text == "!=":
		kind = termNotEqual
	default:
		return term{}, fmt.Errorf("unsupported operator %s", describe(op))
	}
	lit, err := p.literal()
	return term{kind: kind, path: path, literal: lit}, err
}

// call parses "(path)".
func (p *condParser) call() ([]any, error) {
	if err := p.punct("("); err != nil {
		return nil, err
	}
	path, err := p.path()
	if err != nil {
		return nil, err
	}
	return path, p.punct(")")
}

func (p *condParser) path() ([]any, error) {
	root := p.next()
	if root.kind != tokIdent || root.text != p.alias {
		return nil, fmt.Errorf("expected a path starting with the alias %s, found %s", p.alias, describe(root))
	}
	var path []any
	for {
		t := p.peek()
		if t.kind != tokPunct || (t.text != "." && t.text != "[") {
			return path, nil
		}
		p.next()
		if t.text == "." {
			name := p.next()
			if name.kind != tokIdent {
				return nil, fmt.Errorf("expected a name after '.', found %s", describe(name))
			}
			path = append(path, name.text)
			continue
		}
		switch in := p.next(); in.kind {
		case tokString:
			path = append(path, in.str)
		case tokNumber:
			i, err := strconv.Atoi(in.text)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("bad array index %s", in.text)
			}
			path = append(path, i)
		default:
			return nil, fmt.Errorf("expected a name or an index in [], found %s", describe(in))
		}
		if err := p.punct("]"); err != nil {
			return nil, err
		}
	}
}

func (p *condParser) literal() (any, error) {
	t := p.next()
	switch {
	case t.kind == tokString:
		return t.str, nil
	case t.kind == tokNumber:
		return strconv.ParseFloat(t.text, 64)
	case t.kind == tokIdent && strings.EqualFold(t.text, "true"):
		return true, nil
	case t.kind == tokIdent && strings.EqualFold(t.text, "false"):
		return false, nil
	case t.kind == tokIdent && strings.EqualFold(t.text, "null"):
		return nil, nil
	}
	return nil, fmt.Errorf("expected a literal, found %s", describe(t))
}
