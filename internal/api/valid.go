package api

import "github.com/hcpsched/hcpsched/internal/rawjson"

// validJSON reports exactly what encoding/json's Valid reports, several times faster:
// DecodeLean validates every document it decodes before walking it, and Valid's
// byte-at-a-time state machine was half of a lean decode. Like Valid it accepts one
// value surrounded by whitespace, nested at most maxNestingDepth deep, with strings
// whose bytes it does not check as UTF-8 (encoding/json replaces invalid ones when it
// decodes them). FuzzValidJSON holds it to Valid.
func validJSON(data []byte) bool {
	_, ok := scanJSON(data, nil, false)
	return ok
}

// scanJSON is validJSON that, asked to record, also appends to spans where each object
// and array starts and ends (meaningful only if the data is valid), so that the lean
// walk, which steps over each level's members at every nesting depth, need not read a
// container twice.
func scanJSON(data []byte, spans containerSpans, record bool) (containerSpans, bool) {
	var buf [64]byte
	open := buf[:0] // '{' or '[' for each container around i
	var spanBuf [64]int
	openSpans := spanBuf[:0] // when recording: the index in spans of each container around i
	i := 0
	for {
		// A value starts at i, after optional whitespace.
		i = rawjson.SkipSpace(data, i)
		if i >= len(data) {
			return spans, false
		}
		switch c := data[i]; c {
		case '{', '[':
			if len(open) >= maxNestingDepth {
				return spans, false
			}
			start := i
			i = rawjson.SkipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' and ']' follow '{' and '[' by two
				i++
				if record {
					spans = append(spans, containerSpan{start: start, end: i})
				}
				break // an empty container is a complete value
			}
			open = append(open, c)
			if record {
				openSpans = append(openSpans, len(spans))
				spans = append(spans, containerSpan{start: start})
			}
			if c == '{' {
				i = scanKey(data, i)
			}
			if i < 0 {
				return spans, false
			}
			continue // the first member's value
		case '"':
			i = scanString(data, i)
		case 't':
			i = scanLiteral(data, i, "true")
		case 'f':
			i = scanLiteral(data, i, "false")
		case 'n':
			i = scanLiteral(data, i, "null")
		default:
			i = scanNumber(data, i)
		}
		if i < 0 {
			return spans, false
		}
		// A value ended at i: close the containers it ends, then find the next value.
		for {
			i = rawjson.SkipSpace(data, i)
			if len(open) == 0 {
				return spans, i == len(data)
			}
			if i >= len(data) {
				return spans, false
			}
			c := open[len(open)-1]
			if data[i] == c+2 {
				open = open[:len(open)-1]
				i++
				if record {
					spans[openSpans[len(openSpans)-1]].end = i
					openSpans = openSpans[:len(openSpans)-1]
				}
				continue
			}
			if data[i] != ',' {
				return spans, false
			}
			i++
			if c == '{' {
				if i = scanKey(data, rawjson.SkipSpace(data, i)); i < 0 {
					return spans, false
				}
			}
			break
		}
	}
}

// maxNestingDepth is encoding/json's limit on nested containers.
const maxNestingDepth = 10000

// containerSpan is where an object or array starts (its bracket) and ends (after its
// closing bracket), as offsets in the validated data.
type containerSpan struct{ start, end int }

// containerSpans lists a document's containers in the order they open, which is the
// order of their starts.
type containerSpans []containerSpan

// end returns where the container starting at start ends, if one starts there.
func (s containerSpans) end(start int) (int, bool) {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid].start < start {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(s) && s[lo].start == start {
		return s[lo].end, true
	}
	return 0, false
}

// scanKey reads an object member's key and its colon from i, returning where its value
// may start, or -1.
func scanKey(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = scanString(data, i); i < 0 {
		return -1
	}
	i = rawjson.SkipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return i + 1
}

// plainStringByte marks the bytes a JSON string holds as they are: all but control
// characters, the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString reads the string starting at i (a quote), returning where it ends, or -1.
func scanString(data []byte, i int) int {
	j := i + 1
	for j < len(data) {
		c := data[j]
		if plainStringByte[c] {
			j++
			continue
		}
		switch c {
		case '"':
			return j + 1
		case '\\':
			if j+1 >= len(data) {
				return -1
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(data) {
					return -1
				}
				for _, h := range data[j+2 : j+6] {
					if !isHex(h) {
						return -1
					}
				}
				j += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func scanLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber reads the number starting at i, returning where it ends, or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(data []byte, i int) int {
	j := i
	if j < len(data) && data[j] == '-' {
		j++
	}
	switch {
	case j >= len(data):
		return -1
	case data[j] == '0':
		j++
	case '1' <= data[j] && data[j] <= '9':
		j = skipDigits(data, j+1)
	default:
		return -1
	}
	if j < len(data) && data[j] == '.' {
		if j+1 >= len(data) || !isDigit(data[j+1]) {
			return -1
		}
		j = skipDigits(data, j+1)
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		if j >= len(data) || !isDigit(data[j]) {
			return -1
		}
		j = skipDigits(data, j)
	}
	return j
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(data []byte, j int) int {
	for j < len(data) && isDigit(data[j]) {
		j++
	}
	return j
}
