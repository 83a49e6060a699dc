// The skill's input schema, checked as Accord's Python agents check it
// (accord.protocol.a2a.server.skill_schemas, python-jsonschema's first error): the same
// INVALID_INPUT message, field (a path joined by "/", "(root)" for the whole input) and rule
// (the JSON Schema keyword). The schema comes from the exported contract, read in its own key
// order, because the first error found is the first keyword broken in that order.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	c "accord.dev/contract"
	g "accord.dev/contract/generated"
)

// member is one key of an ordered JSON object.
type member struct {
	key   string
	value any
}

// ordered is a JSON object with its keys in document order.
type ordered []member

func (o ordered) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// readOrdered parses JSON keeping object key order (numbers as json.Number).
func readOrdered(decoder *json.Decoder) (any, error) {
	token, err := decoder.Token()
	if err != nil {
		return nil, err
	}
	switch t := token.(type) {
	case json.Delim:
		if t == '{' {
			out := ordered{}
			for decoder.More() {
				key, err := decoder.Token()
				if err != nil {
					return nil, err
				}
				value, err := readOrdered(decoder)
				if err != nil {
					return nil, err
				}
				out = append(out, member{key.(string), value})
			}
			_, err := decoder.Token()
			return out, err
		}
		out := []any{}
		for decoder.More() {
			value, err := readOrdered(decoder)
			if err != nil {
				return nil, err
			}
			out = append(out, value)
		}
		_, err := decoder.Token()
		return out, err
	default:
		return t, nil
	}
}

// InputSchema is a skill's input schema, ready to check inputs.
type InputSchema struct {
	root     any
	patterns map[string]*regexp.Regexp
}

// NewInputSchema reads one schema document (JSON text).
func NewInputSchema(r io.Reader) (*InputSchema, error) {
	decoder := json.NewDecoder(r)
	decoder.UseNumber()
	root, err := readOrdered(decoder)
	if err != nil {
		return nil, err
	}
	return &InputSchema{root: root, patterns: map[string]*regexp.Regexp{}}, nil
}

// SkillInputSchema is the input schema of skill in an exported agent contract (JSON text).
func SkillInputSchema(contract []byte, skill string) (*InputSchema, error) {
	decoder := json.NewDecoder(strings.NewReader(string(contract)))
	decoder.UseNumber()
	root, err := readOrdered(decoder)
	if err != nil {
		return nil, err
	}
	doc, _ := root.(ordered)
	skills, _ := doc.get("skills")
	list, _ := skills.([]any)
	for _, item := range list {
		entry, _ := item.(ordered)
		if id, _ := entry.get("id"); id == skill {
			schema, _ := entry.get("input_schema")
			return &InputSchema{root: schema, patterns: map[string]*regexp.Regexp{}}, nil
		}
	}
	return nil, fmt.Errorf("the contract has no skill %s", skill)
}

// schemaError is the first place an input breaks its schema.
type schemaError struct {
	path    []string
	keyword string
	value   any // the keyword's value in the schema
	message string
}

// Check is nil when value fits the schema, else INVALID_INPUT as Python's check_input words it.
func (s *InputSchema) Check(value any) error {
	found := s.first(s.root, value, nil)
	if found == nil {
		return nil
	}
	path := strings.Join(found.path, "/")
	if path == "" {
		path = "(root)"
	}
	message := fmt.Sprintf("input at %s breaks the skill schema: %s %s", pyRepr(path), found.keyword, pyRepr(found.value))
	if found.keyword == "additionalProperties" || found.keyword == "required" {
		message = fmt.Sprintf("input at %s: %s", pyRepr(path), found.message)
	}
	return c.NewError(g.ErrorCodeInvalidInput, message, c.Object{"field": path, "rule": found.keyword})
}

// first walks the schema's keywords in document order, as python-jsonschema does.
func (s *InputSchema) first(schema any, value any, path []string) *schemaError {
	o, ok := schema.(ordered)
	if !ok {
		return nil // true, or a schema form the contract does not use
	}
	for _, kw := range o {
		if found := s.keyword(o, kw, value, path); found != nil {
			return found
		}
	}
	return nil
}

func (s *InputSchema) keyword(schema ordered, kw member, value any, path []string) *schemaError {
	broken := &schemaError{path: path, keyword: kw.key, value: kw.value}
	object, isObject := value.(map[string]any)
	switch kw.key {
	case "type":
		kinds, _ := kw.value.([]any)
		if name, ok := kw.value.(string); ok {
			kinds = []any{name}
		}
		for _, kind := range kinds {
			if isType(value, kind.(string)) {
				return nil
			}
		}
		return broken
	case "enum":
		for _, allowed := range kw.value.([]any) {
			if sameJSON(allowed, value) {
				return nil
			}
		}
		return broken
	case "pattern":
		text, ok := value.(string)
		if !ok {
			return nil
		}
		re := s.patterns[kw.value.(string)]
		if re == nil {
			re = regexp.MustCompile(kw.value.(string))
			s.patterns[kw.value.(string)] = re
		}
		if re.MatchString(text) {
			return nil
		}
		return broken
	case "maxLength":
		text, ok := value.(string)
		limit, _ := strconv.Atoi(kw.value.(json.Number).String())
		if !ok || utf8.RuneCountInString(text) <= limit {
			return nil
		}
		return broken
	case "minimum":
		n, ok := number(value)
		limit, _ := kw.value.(json.Number).Float64()
		if !ok || n >= limit {
			return nil
		}
		return broken
	case "required":
		if !isObject {
			return nil
		}
		for _, key := range kw.value.([]any) {
			if _, present := object[key.(string)]; !present {
				broken.message = fmt.Sprintf("%s is a required property", pyRepr(key))
				return broken
			}
		}
		return nil
	case "additionalProperties":
		if !isObject || kw.value != false {
			return nil
		}
		props, _ := schema.get("properties")
		known, _ := props.(ordered)
		extra := []string{}
		for key := range object {
			if _, ok := known.get(key); !ok {
				extra = append(extra, key)
			}
		}
		if len(extra) == 0 {
			return nil
		}
		sort.Strings(extra) // a Go map has no order: Python names them as the sender wrote them
		quoted := make([]string, len(extra))
		for i, key := range extra {
			quoted[i] = pyRepr(key)
		}
		verb := "was"
		if len(extra) > 1 {
			verb = "were"
		}
		broken.message = fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(quoted, ", "), verb)
		return broken
	case "anyOf":
		for _, sub := range kw.value.([]any) {
			if s.first(sub, value, path) == nil {
				return nil
			}
		}
		return broken
	case "properties":
		if !isObject {
			return nil
		}
		for _, prop := range kw.value.(ordered) {
			if inner, present := object[prop.key]; present {
				if found := s.first(prop.value, inner, append(append([]string{}, path...), prop.key)); found != nil {
					return found
				}
			}
		}
	}
	return nil
}

func number(value any) (float64, bool) {
	switch v := value.(type) {
	case float64:
		return v, true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// isType is JSON Schema's type test ("integer": a number with no fraction; a bool is none).
func isType(value any, kind string) bool {
	switch kind {
	case "null":
		return value == nil
	case "boolean":
		_, ok := value.(bool)
		return ok
	case "string":
		_, ok := value.(string)
		return ok
	case "object":
		_, ok := value.(map[string]any)
		return ok
	case "array":
		_, ok := value.([]any)
		return ok
	case "number":
		_, ok := number(value)
		return ok
	case "integer":
		n, ok := number(value)
		return ok && n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

func sameJSON(schemaValue, value any) bool {
	if n, ok := schemaValue.(json.Number); ok {
		f, _ := n.Float64()
		v, isNumber := number(value)
		return isNumber && v == f
	}
	return schemaValue == value
}

// pyRepr is Python's repr of a JSON value as the schema holds it.
func pyRepr(value any) string {
	switch v := value.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case json.Number:
		return v.String()
	case string:
		quote := "'"
		if strings.Contains(v, "'") && !strings.Contains(v, `"`) {
			quote = `"`
		}
		escaped := strings.ReplaceAll(v, `\`, `\\`)
		if quote == "'" {
			escaped = strings.ReplaceAll(escaped, "'", `\'`)
		}
		escaped = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(escaped)
		return quote + escaped + quote
	case []any:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = pyRepr(item)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case ordered:
		items := make([]string, len(v))
		for i, m := range v {
			items[i] = pyRepr(m.key) + ": " + pyRepr(m.value)
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(value)
}
