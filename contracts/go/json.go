// Hand-written: JSON text written as Python's `json.dumps(value, ensure_ascii=False)` writes
// it (separators ", " and ": "), so a text an Accord server builds that way (an ErrorInfo's
// details, an MCP error's text block) is the same string from Go.

package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PythonJSONDumps is `json.dumps(value, ensure_ascii=False, sort_keys=True)` for the values
// encoding/json decodes into (nil, bool, string, float64, json.Number, []any, map[string]any)
// and Go's integers. A Go map has no order, so keys are always written sorted (by code point,
// as Python sorts str keys): a text Python wrote with sort_keys=False reads the same as JSON,
// and the same as text when its keys were in order.
func PythonJSONDumps(value any) (string, error) {
	var b strings.Builder
	if err := dumps(&b, value); err != nil {
		return "", err
	}
	return b.String(), nil
}

func dumps(b *strings.Builder, value any) error {
	switch v := value.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case float64:
		s, err := pythonFloat(v)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case float32:
		return dumps(b, float64(v))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		fmt.Fprintf(b, "%d", v)
	case []any:
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := dumps(b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // byte order of UTF-8 is code point order
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, k)
			b.WriteString(": ")
			if err := dumps(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		// Any other Go value (a struct, a typed slice) is written as its JSON reads.
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var plain any
		decoder := json.NewDecoder(strings.NewReader(string(raw)))
		decoder.UseNumber()
		if err := decoder.Decode(&plain); err != nil {
			return err
		}
		if reflect.TypeOf(plain) == reflect.TypeOf(v) {
			return fmt.Errorf("no JSON form for %T", v)
		}
		return dumps(b, plain)
	}
	return nil
}

// pythonFloat is Python's repr of a float: fixed notation for exponents -4..15, else
// scientific with a signed two-digit exponent; an integral float keeps ".0".
func pythonFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("JSON has no form for %v", f) // Python would write NaN: refuse
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exp, _ := strings.Cut(sci, "e")
	e, _ := strconv.Atoi(exp)
	if e < -4 || e >= 16 {
		sign := "+"
		if e < 0 {
			sign, e = "-", -e
		}
		return fmt.Sprintf("%se%s%02d", mantissa, sign, e), nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s, nil
}

// writeString writes a JSON string as Python does with ensure_ascii=False: only '"', '\\'
// and control characters escaped, everything else as itself.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// Object is a JSON object as Go decodes one.
type Object = map[string]any

func asObject(value any) (Object, bool) {
	o, ok := value.(map[string]any)
	return o, ok && o != nil
}
