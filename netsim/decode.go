package netsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// decodeStrict decodes exactly one JSON value from data into v (a pointer to
// a JSON form), rejecting unknown keys and trailing data. Its errors say
// where the problem is: a line and column for syntax errors, a key path for
// everything else.
func decodeStrict(data []byte, v any) error {
	if err := checkDuplicates(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			return fmt.Errorf("unexpected data after the JSON value at %s", lineCol(data, dec.InputOffset()))
		}
		return nil
	}
	if errors.Is(err, io.EOF) {
		return errors.New("empty input: want a JSON object")
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// Offset counts the offending byte; point at it.
		return fmt.Errorf("invalid JSON at %s: %v", lineCol(data, syn.Offset-1), err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of input (unclosed object, array or string?)")
	}
	if e := explain(data, reflect.TypeOf(v).Elem()); e != nil {
		return e
	}
	// Never show encoding/json's own message: it names Go types.
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		where := ute.Field
		if where == "" {
			where = "top level"
		}
		return fmt.Errorf("%s: cannot use JSON %s here, want %s", where, ute.Value, kindName(ute.Type))
	}
	var he interface{ Unwrap() error }
	if errors.As(err, &he) && he.Unwrap() != nil {
		return fmt.Errorf("invalid value: %v", he.Unwrap())
	}
	return errors.New("invalid profile JSON")
}

// kindName says in JSON terms what a Go type wants.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number >= 0"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return "another value"
}

// checkDuplicates reports the first object key that appears twice in the
// same object, also differing only in case (encoding/json would let the
// last one win silently). Syntax errors are left to the decoder.
func checkDuplicates(data []byte) error {
	type frame struct {
		obj     bool
		keys    map[string]bool
		path    string
		key     string
		idx     int
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	done := func() { // a value of the top frame is complete
		if n := len(stack); n > 0 {
			if f := stack[n-1]; f.obj {
				f.wantKey = true
			} else {
				f.idx++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *frame
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if top != nil && top.obj && top.wantKey {
			if k, ok := tok.(string); ok {
				lk := strings.ToLower(k)
				if top.keys[lk] {
					where := top.path
					if where == "" {
						where = "top level"
					}
					return fmt.Errorf("%s: duplicate key %q (keys are matched without regard to case)", where, k)
				}
				top.keys[lk], top.key, top.wantKey = true, k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			path := ""
			switch {
			case top == nil:
			case top.obj:
				path = join(top.path, top.key)
			default:
				path = fmt.Sprintf("%s[%d]", top.path, top.idx)
			}
			f := &frame{obj: tok == json.Delim('{'), path: path}
			if f.obj {
				f.keys, f.wantKey = map[string]bool{}, true
			}
			stack = append(stack, f)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
		default:
			done()
		}
	}
}

// lineCol turns a byte offset into "line L, column C" (1-based).
func lineCol(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := off - int64(bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

var durationType = reflect.TypeFor[Duration]()

// explain re-reads data generically and walks it alongside the JSON form t to
// find the first problem with its path. It returns nil if it finds none.
func explain(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return walk(v, t, "")
}

func walk(v any, t reflect.Type, path string) error {
	where := path
	if where == "" {
		where = "top level"
	}
	if v == nil { // null: leaves the value alone
		return nil
	}
	if t == durationType {
		var err error
		switch x := v.(type) {
		case string:
			_, err = parseDuration(x)
		case json.Number:
			_, err = parseNanos(x.String())
		default:
			err = fmt.Errorf("want a duration string such as \"10ms\", got %s", jsonKind(v))
		}
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return walk(v, t.Elem(), path)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a JSON object, got %s", where, jsonKind(v))
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			f, ok := fieldByJSONName(t, k)
			if !ok {
				return fmt.Errorf("%s: unknown field %q (known fields: %s)", where, k, strings.Join(jsonNames(t), ", "))
			}
			if err := walk(m[k], f.Type, join(path, jsonName(f))); err != nil {
				return err
			}
		}
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a JSON array, got %s", where, jsonKind(v))
		}
		for i, e := range a {
			if err := walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a number, got %s", where, jsonKind(v))
		}
		if _, err := strconv.ParseFloat(n.String(), 64); err != nil {
			return fmt.Errorf("%s: number %s is out of range", where, n)
		}
	case reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a whole number >= 0, got %s", where, jsonKind(v))
		}
		if _, err := strconv.ParseUint(n.String(), 10, 64); err != nil {
			return fmt.Errorf("%s: want a whole number in [0, 2^64), got %s", where, n)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: want a string, got %s", where, jsonKind(v))
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return fmt.Sprintf("%v", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		names = append(names, jsonName(f))
	}
	return names
}

// fieldByJSONName finds the field for key the way encoding/json does: an
// exact match first, then a case-insensitive one.
func fieldByJSONName(t reflect.Type, key string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if jsonName(f) == key {
			return f, true
		}
	}
	for f := range t.Fields() {
		if strings.EqualFold(jsonName(f), key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
