package caddymodule

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

// The handler reads its JSON configuration itself, field by field, so
// that each problem is named by its field's path (verify.ip_ranges[1].token)
// in the words of the configuration, not Go's ("cannot unmarshal string
// into Go struct field Handler.max_hosts of type int"), and so that every
// problem is reported at once: the fields that cannot be read, and what
// the handler's own checks (see Settings) find in the others. An unknown
// field is an error, as Caddy's strict decoding makes it.

// UnmarshalJSON implements json.Unmarshaler.
func (h *Handler) UnmarshalJSON(data []byte) error {
	type options Handler // the fields, without this method
	var o options
	errs := decodeObject("", data, reflect.ValueOf(&o).Elem())
	*h = Handler(o)
	if len(errs) == 0 {
		return nil
	}
	failed := make(map[string]bool) // the top-level fields that could not be read
	for _, err := range errs {
		var fe *fieldError
		if errors.As(err, &fe) {
			top, _, _ := strings.Cut(fe.path, ".")
			top, _, _ = strings.Cut(top, "[")
			failed[top] = true
		}
	}
	c := *h
	c.setDefaults()
	errs = append(errs, c.readExcept(new(Settings), failed)...)
	return fmt.Errorf("robots_enforce: %w", problems(errs))
}

// A fieldError is a field of the JSON configuration that cannot be read.
type fieldError struct {
	path string // "max_hosts", "verify.ip_ranges[1].token"
	msg  string
}

func (e *fieldError) Error() string { return e.path + ": " + e.msg }

// decodeObject reads the JSON object data, at path, into the struct v,
// field by field, and returns a problem for each field it cannot read.
// Keys are matched to fields as encoding/json matches them: by the json
// tag, exactly, or else without regard to case.
func decodeObject(path string, data []byte, v reflect.Value) []error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return []error{&fieldError{path: cmp.Or(path, "the configuration"), msg: "want an object, got " + jsonKind(data)}}
	}
	names := jsonNames(v.Type())
	var errs []error
	taken := make(map[string]bool, len(raw))
	for i, name := range names {
		if name == "" {
			continue
		}
		key, ok := jsonKey(raw, name)
		if !ok {
			continue
		}
		taken[key] = true
		errs = append(errs, decodeValue(joinPath(path, name), raw[key], v.Field(i))...)
	}
	var unknown []string
	for key := range raw {
		if !taken[key] {
			unknown = append(unknown, key)
		}
	}
	slices.Sort(unknown)
	for _, key := range unknown {
		msg := "unknown field"
		if near := nearestName(key, names); near != "" {
			msg += "; did you mean " + near + "?"
		}
		errs = append(errs, &fieldError{path: joinPath(path, key), msg: msg})
	}
	return errs
}

// decodeValue reads the JSON value data, at path, into v.
func decodeValue(path string, data []byte, v reflect.Value) []error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil // as encoding/json: the field keeps its value
	}
	t := v.Type()
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		if err := json.Unmarshal(data, v.Addr().Interface()); err != nil {
			return []error{&fieldError{path: path, msg: fmt.Sprintf("want %s, got %s", wanted(t), jsonKind(data))}}
		}
		return nil
	}
	switch {
	case t.Kind() == reflect.Pointer:
		elem := reflect.New(t.Elem())
		errs := decodeValue(path, data, elem.Elem())
		v.Set(elem)
		return errs
	case t.Kind() == reflect.Struct:
		return decodeObject(path, data, v)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return []error{&fieldError{path: path, msg: fmt.Sprintf("want %s, got %s", wanted(t), jsonKind(data))}}
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		var errs []error
		for i, item := range items {
			errs = append(errs, decodeValue(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i))...)
		}
		v.Set(s)
		return errs
	}
	if err := json.Unmarshal(data, v.Addr().Interface()); err != nil {
		return []error{&fieldError{path: path, msg: fmt.Sprintf("want %s, got %s", wanted(t), jsonKind(data))}}
	}
	return nil
}

// jsonNames returns the JSON name of each field of the struct type t, ""
// for a field JSON does not see.
func jsonNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		names[i] = cmp.Or(name, f.Name)
	}
	return names
}

// jsonKey returns the key of raw that names the field name: name itself,
// or else one equal to it but for case.
func jsonKey(raw map[string]json.RawMessage, name string) (string, bool) {
	if _, ok := raw[name]; ok {
		return name, true
	}
	for key := range raw {
		if strings.EqualFold(key, name) {
			return key, true
		}
	}
	return "", false
}

// wantedNames say what a field of a type of this package's takes.
var wantedNames = map[reflect.Type]string{
	reflect.TypeFor[caddy.Duration](): `a duration such as "10s" or "24h", or a number of nanoseconds`,
	reflect.TypeFor[ByteSize]():       `a number of octets, or a size such as "1MiB"`,
}

// wanted says in words what a value of type t is written as in JSON.
func wanted(t reflect.Type) string {
	if w, ok := wantedNames[t]; ok {
		return w
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(wanted(t.Elem()), "a "), "an ") + "s"
	case reflect.Map:
		return "an object whose values are " + strings.TrimPrefix(wanted(t.Elem()), "a ")
	case reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return t.String()
}

// maxShownValue bounds how much of a value a message quotes.
const maxShownValue = 40

// jsonKind names the kind of the JSON value data, with the value itself
// when it is short: `the string "ten"`, `an object`.
func jsonKind(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "nothing"
	}
	shown := string(data)
	if len(shown) > maxShownValue {
		shown = shown[:maxShownValue] + "…"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "the string " + shown
	case 't', 'f':
		return shown
	}
	return "the number " + shown
}

// joinPath names a field below path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// nearestName returns the field name key is most likely a misspelling of
// (at most two edits away), or "".
func nearestName(key string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if n == "" {
			continue
		}
		if d := editDistance(strings.ToLower(key), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in octets.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
