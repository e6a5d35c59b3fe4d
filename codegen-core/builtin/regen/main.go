// Command regen builds kube-codegen's table of Kubernetes built-in schemas
// (codegen-core/builtin/schemas.tsv) from upstream sources of each
// supported Kubernetes version:
//
//   - the OpenAPI v3 definitions in k8s.io/kubernetes' api/openapi-spec/v3
//     give the structure: properties, types, formats, items, maps,
//     list and map types, list-map keys and the descriptions;
//   - the Go types in k8s.io/api, k8s.io/apimachinery and
//     k8s.io/kube-aggregator give what controller-gen reads from them and
//     the OpenAPI definitions leave out: which fields are required (json tags
//     and +required/+optional markers), validation markers
//     (+kubebuilder:validation:*, +k8s:maxItems, +k8s:minimum, +k8s:required,
//     +k8s:immutable, +k8s:enum with the type's constants), +default values,
//     and struct-level extensions of inline-embedded types.
//
// A few types have the fixed schema controller-gen gives them in every CRD
// (Quantity, IntOrString, RawExtension, Time, MicroTime, apiextensions' JSON);
// they are the
// conversion's rules, not data.
//
// Usage (see ../regen.sh, which resolves the module directories):
//
//	regen -out schemas.tsv 1.37 <openapi-v3-dir> <k8s.io/api dir> <k8s.io/apimachinery dir> <k8s.io/kube-aggregator dir> [1.36 ...]
//
// Every line of the output after the header is
//
//	<definition name> TAB <minor versions, comma-separated> TAB <schema JSON>
//
// where a schema refers to another definition as {"$ref": "<name>"} with
// sibling keys (the field's description, default, markers) that the engine
// merges over the referenced schema.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

type schema = map[string]any

const quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

// fixed are the definitions controller-gen renders the same way in every CRD
// (its known_types.go), whatever the OpenAPI definition says.
var fixed = map[string]schema{
	"io.k8s.apimachinery.pkg.api.resource.Quantity": {
		"anyOf":                      []any{schema{"type": "integer"}, schema{"type": "string"}},
		"pattern":                    quantityPattern,
		"x-kubernetes-int-or-string": true,
	},
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
		"anyOf":                      []any{schema{"type": "integer"}, schema{"type": "string"}},
		"x-kubernetes-int-or-string": true,
	},
	"io.k8s.apimachinery.pkg.runtime.RawExtension": {
		"type":                                 "object",
		"x-kubernetes-preserve-unknown-fields": true,
	},
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": {
		"x-kubernetes-preserve-unknown-fields": true,
	},
	"io.k8s.apimachinery.pkg.apis.meta.v1.Time":      {"type": "string", "format": "date-time"},
	"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
}

// dropped are OpenAPI keys controller-gen never writes into a CRD.
var dropped = map[string]bool{
	"x-kubernetes-patch-strategy":      true,
	"x-kubernetes-patch-merge-key":     true,
	"x-kubernetes-group-version-kind":  true,
	"x-kubernetes-unions":              true,
	"x-kubernetes-selectable-fields":   true,
	"x-kubernetes-list-type-for-field": true,
	"readOnly":                         true,
	// Defaults come from +default markers: openapi-gen also writes the zero
	// value of every non-pointer field, which controller-gen does not.
	"default": true,
}

func main() {
	out := flag.String("out", "schemas.tsv", "output file")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || len(args)%5 != 0 {
		fmt.Fprintln(os.Stderr, "usage: regen -out FILE <minor> <openapi-v3-dir> <api-dir> <apimachinery-dir> <aggregator-dir> ...")
		os.Exit(2)
	}
	table := map[string]map[string]string{} // name -> version -> json
	var versions []string
	for i := 0; i < len(args); i += 5 {
		v := args[i]
		versions = append(versions, v)
		defs, err := convertVersion(args[i+1], map[string]string{
			"k8s.io/api":             args[i+2],
			"k8s.io/apimachinery":    args[i+3],
			"k8s.io/kube-aggregator": args[i+4],
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "Kubernetes %s: %v\n", v, err)
			os.Exit(1)
		}
		for name, s := range defs {
			text, err := marshal(s)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				os.Exit(1)
			}
			if table[name] == nil {
				table[name] = map[string]string{}
			}
			table[name][v] = text
		}
	}
	var buf bytes.Buffer
	buf.WriteString("# Kubernetes built-in schemas for kube-codegen, written by codegen-core/builtin/regen.sh. Do not edit.\n")
	buf.WriteString("versions\t" + strings.Join(versions, ",") + "\n")
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		// One line per distinct schema, with the versions that share it.
		byText := map[string][]string{}
		var order []string
		for _, v := range versions {
			text, ok := table[name][v]
			if !ok {
				continue
			}
			if _, seen := byText[text]; !seen {
				order = append(order, text)
			}
			byText[text] = append(byText[text], v)
		}
		for _, text := range order {
			fmt.Fprintf(&buf, "%s\t%s\t%s\n", name, strings.Join(byText[text], ","), text)
		}
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func marshal(s schema) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// ---- one version ------------------------------------------------------------

type converter struct {
	defs  map[string]schema
	pkgs  map[string]*goPackage // by import path
	roots map[string]string     // module path -> directory
	warn  func(format string, args ...any)
}

func convertVersion(specDir string, roots map[string]string) (map[string]schema, error) {
	defs, err := loadDefinitions(specDir)
	if err != nil {
		return nil, err
	}
	c := &converter{defs: defs, pkgs: map[string]*goPackage{}, roots: roots}
	c.warn = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "warning: "+format+"\n", args...) }
	out := map[string]schema{}
	for name, def := range defs {
		if f, ok := fixed[name]; ok {
			out[name] = clone(f).(schema)
			continue
		}
		out[name] = c.convertDefinition(name, def)
	}
	return out, nil
}

// loadDefinitions reads every components.schemas entry of the v3 spec files.
// A definition present in several files with different bodies (DeleteOptions,
// WatchEvent) keeps the body of the first file in name order.
func loadDefinitions(dir string) (map[string]schema, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no OpenAPI v3 files in %s", dir)
	}
	sort.Strings(files)
	defs := map[string]schema{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for name, raw := range doc.Components.Schemas {
			if _, ok := defs[name]; ok {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var s schema
			if err := dec.Decode(&s); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", f, name, err)
			}
			defs[name] = s
		}
	}
	return defs, nil
}

// goLocation maps a definition name to its Go package import path and type name.
func goLocation(name string) (importPath, typeName string) {
	dot := strings.LastIndex(name, ".")
	prefix, typeName := name[:dot], name[dot+1:]
	switch {
	case strings.HasPrefix(prefix, "io.k8s.api."):
		return "k8s.io/api/" + strings.ReplaceAll(strings.TrimPrefix(prefix, "io.k8s.api."), ".", "/"), typeName
	case strings.HasPrefix(prefix, "io.k8s.apimachinery."):
		return "k8s.io/apimachinery/" + strings.ReplaceAll(strings.TrimPrefix(prefix, "io.k8s.apimachinery."), ".", "/"), typeName
	case strings.HasPrefix(prefix, "io.k8s.kube-aggregator."):
		return "k8s.io/kube-aggregator/" + strings.ReplaceAll(strings.TrimPrefix(prefix, "io.k8s.kube-aggregator."), ".", "/"), typeName
	case strings.HasPrefix(prefix, "io.k8s.apiextensions-apiserver."):
		return "k8s.io/apiextensions-apiserver/" + strings.ReplaceAll(strings.TrimPrefix(prefix, "io.k8s.apiextensions-apiserver."), ".", "/"), typeName
	}
	return "", typeName
}

// refName is the definition a `$ref` points at.
func refName(ref string) string {
	return ref[strings.LastIndex(ref, "/")+1:]
}

func (c *converter) convertDefinition(name string, def schema) schema {
	out := c.convertNode(def)
	importPath, typeName := goLocation(name)
	pkg := c.pkg(importPath)
	if pkg == nil {
		return out
	}
	info := pkg.types[typeName]
	if info == nil {
		return out
	}
	// Type-level markers of the struct itself.
	c.applyMarkers(out, info.markers, pkg, "")
	if info.structType == nil {
		sortRequired(out)
		return out
	}
	fields := c.flatFields(pkg, info, 0)
	props, _ := out["properties"].(schema)
	var required []string
	var immutableOptional []string
	for _, f := range fields {
		if f.inline {
			// Struct-level extensions of an inline-embedded type carry over,
			// as controller-gen's allOf flattening copies them.
			if emb := c.namedType(f.pkg, f.expr); emb != nil && emb.info.structType != nil {
				for _, m := range emb.info.markers {
					if m.name == "structType" || m.name == "mapType" {
						if _, set := out["x-kubernetes-map-type"]; !set {
							out["x-kubernetes-map-type"] = m.value
						}
					}
				}
			}
			continue
		}
		prop, ok := props[f.json].(schema)
		if !ok {
			continue
		}
		if f.required() {
			required = append(required, f.json)
		}
		c.applyFieldType(prop, f)
		c.applyMarkers(prop, f.markers, f.pkg, f.json)
		if f.has("k8s:immutable") && !f.required() {
			immutableOptional = append(immutableOptional, f.json)
		}
	}
	sort.Strings(required)
	if len(required) > 0 {
		out["required"] = toAny(required)
	} else {
		delete(out, "required")
	}
	for _, name := range immutableOptional {
		appendRule(out, fmt.Sprintf("!has(oldSelf.%s) || has(self.%s)", name, name), fmt.Sprintf("field %s is immutable once set", name))
	}
	return out
}

// convertNode turns an OpenAPI node into the table's form.
func (c *converter) convertNode(n schema) schema {
	out := schema{}
	if all, ok := n["allOf"].([]any); ok && len(all) == 1 {
		if ref, ok := all[0].(schema)["$ref"].(string); ok {
			out["$ref"] = refName(ref)
		}
	}
	for k, v := range n {
		switch {
		case dropped[k], k == "allOf" && out["$ref"] != nil:
		case k == "$ref":
			if s, ok := v.(string); ok {
				out["$ref"] = refName(s)
			}
		case k == "properties":
			props := schema{}
			for pk, pv := range v.(schema) {
				props[pk] = c.convertNode(pv.(schema))
			}
			out[k] = props
		case k == "items" || k == "additionalProperties":
			if s, ok := v.(schema); ok {
				out[k] = c.convertNode(s)
			} else {
				out[k] = v
			}
		default:
			out[k] = clone(v)
		}
	}
	// A list type only means something on a list ([]byte is a string).
	if out["type"] != nil && out["type"] != "array" {
		delete(out, "x-kubernetes-list-type")
		delete(out, "x-kubernetes-list-map-keys")
	}
	return out
}

// applyFieldType applies the type-level markers of a field's named Go type
// that is not a struct (`type Protocol string` with +k8s:enum): the OpenAPI
// definitions inline such types, controller-gen keeps their markers. A list
// or map of the type gets them on its items or values.
func (c *converter) applyFieldType(prop schema, f field) {
	expr := f.expr
	target := prop
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
			continue
		case *ast.ArrayType:
			if id, ok := e.Elt.(*ast.Ident); ok && id.Name == "byte" {
				return
			}
			items, ok := target["items"].(schema)
			if !ok {
				return
			}
			target, expr = items, e.Elt
			continue
		case *ast.MapType:
			values, ok := target["additionalProperties"].(schema)
			if !ok {
				return
			}
			target, expr = values, e.Value
			continue
		}
		break
	}
	named := c.namedType(f.pkg, expr)
	if named == nil || named.info.structType != nil {
		return
	}
	c.applyMarkers(target, named.info.markers, named.pkg, named.info.name)
}

type namedRef struct {
	pkg  *goPackage
	info *typeInfo
}

// namedType resolves an identifier or a qualified identifier to a type of a
// scanned package.
func (c *converter) namedType(pkg *goPackage, expr ast.Expr) *namedRef {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return c.namedType(pkg, e.X)
	case *ast.Ident:
		if info := pkg.types[e.Name]; info != nil {
			return &namedRef{pkg, info}
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if path, ok := pkg.imports[x.Name]; ok {
				if other := c.pkg(path); other != nil {
					if info := other.types[e.Sel.Name]; info != nil {
						return &namedRef{other, info}
					}
				}
			}
		}
	}
	return nil
}

// flatFields lists the fields of a struct with inline-embedded structs
// expanded, each with the package it was declared in (for markers and types).
func (c *converter) flatFields(pkg *goPackage, info *typeInfo, depth int) []field {
	var out []field
	for _, f := range info.fields {
		f.pkg = pkg
		if f.inline && depth < 8 {
			out = append(out, f)
			if emb := c.namedType(pkg, f.expr); emb != nil && emb.info.structType != nil {
				out = append(out, c.flatFields(emb.pkg, emb.info, depth+1)...)
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

// ---- markers ----------------------------------------------------------------

type marker struct {
	name  string
	value string
}

// markerNames are the markers controller-gen applies to schemas, longest first
// so that `kubebuilder:validation:items:MaxLength` wins over shorter prefixes.
var markerNames = func() []string {
	names := []string{
		"kubebuilder:validation:Required", "kubebuilder:validation:Optional", "required", "optional",
		"k8s:required", "k8s:optional", "k8s:immutable", "k8s:enum",
		"k8s:maxItems", "k8s:minimum", "k8s:maximum",
		"default", "kubebuilder:default", "nullable",
		"kubebuilder:pruning:PreserveUnknownFields", "kubebuilder:validation:EmbeddedResource",
		"listType", "listMapKey", "mapType", "structType", "k8s:listType", "k8s:listMapKey",
	}
	for _, v := range []string{"Maximum", "Minimum", "ExclusiveMaximum", "ExclusiveMinimum", "MultipleOf",
		"MinProperties", "MaxProperties", "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems",
		"Enum", "Format", "Type", "XPreserveUnknownFields", "XEmbeddedResource", "XIntOrString", "XValidation"} {
		names = append(names, "kubebuilder:validation:"+v, "kubebuilder:validation:items:"+v)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return names
}()

// parseMarkers reads `+name` / `+name=value` / `+name:args` lines of a comment.
func parseMarkers(groups ...*ast.CommentGroup) []marker {
	var out []marker
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"))
			if !strings.HasPrefix(text, "+") {
				continue
			}
			text = text[1:]
			for _, name := range markerNames {
				if text == name {
					out = append(out, marker{name: name})
					break
				}
				if strings.HasPrefix(text, name) && (text[len(name)] == '=' || text[len(name)] == ':') {
					value := text[len(name)+1:]
					if strings.HasPrefix(name, "k8s:") {
						if i := strings.IndexByte(value, '#'); i >= 0 {
							value = value[:i]
						}
					}
					out = append(out, marker{name: name, value: strings.TrimSpace(value)})
					break
				}
			}
		}
	}
	return out
}

// applyMarkers applies validation markers the way controller-gen's
// ApplyToSchema functions do (a marker that does not fit the node's type
// is skipped, where controller-gen stops with an error).
func (c *converter) applyMarkers(s schema, markers []marker, pkg *goPackage, where string) {
	for _, m := range markers {
		target := s
		name := m.name
		if strings.HasPrefix(name, "kubebuilder:validation:items:") {
			items, ok := s["items"].(schema)
			if !ok {
				continue
			}
			target = items
			name = "kubebuilder:validation:" + strings.TrimPrefix(name, "kubebuilder:validation:items:")
		}
		ty, _ := target["type"].(string)
		textual := ty == "string" || target["x-kubernetes-int-or-string"] == true
		numeric := ty == "integer" || ty == "number"
		switch name {
		case "kubebuilder:validation:Maximum", "k8s:maximum":
			if numeric {
				target["maximum"] = number(m.value)
			}
		case "kubebuilder:validation:Minimum", "k8s:minimum":
			if numeric {
				target["minimum"] = number(m.value)
			}
		case "kubebuilder:validation:ExclusiveMaximum":
			if numeric {
				target["exclusiveMaximum"] = m.value != "false"
			}
		case "kubebuilder:validation:ExclusiveMinimum":
			if numeric {
				target["exclusiveMinimum"] = m.value != "false"
			}
		case "kubebuilder:validation:MultipleOf":
			if numeric {
				target["multipleOf"] = number(m.value)
			}
		case "kubebuilder:validation:MaxLength":
			if textual {
				target["maxLength"] = number(m.value)
			}
		case "kubebuilder:validation:MinLength":
			if textual {
				target["minLength"] = number(m.value)
			}
		case "kubebuilder:validation:Pattern":
			if textual {
				target["pattern"] = unquote(m.value)
			}
		case "kubebuilder:validation:MaxItems", "k8s:maxItems":
			if ty == "array" {
				target["maxItems"] = number(m.value)
			}
		case "kubebuilder:validation:MinItems":
			if ty == "array" {
				target["minItems"] = number(m.value)
			}
		case "kubebuilder:validation:MinProperties":
			if ty == "object" {
				target["minProperties"] = number(m.value)
			}
		case "kubebuilder:validation:MaxProperties":
			if ty == "object" {
				target["maxProperties"] = number(m.value)
			}
		case "kubebuilder:validation:Enum":
			var values []any
			for _, v := range strings.Split(m.value, ";") {
				values = append(values, anyValue(v))
			}
			target["enum"] = values
		case "kubebuilder:validation:Format":
			target["format"] = unquote(m.value)
		case "kubebuilder:validation:Type":
			target["type"] = unquote(m.value)
		case "kubebuilder:validation:XPreserveUnknownFields", "kubebuilder:pruning:PreserveUnknownFields":
			target["x-kubernetes-preserve-unknown-fields"] = true
		case "kubebuilder:validation:XEmbeddedResource", "kubebuilder:validation:EmbeddedResource":
			target["x-kubernetes-embedded-resource"] = true
		case "kubebuilder:validation:XIntOrString":
			target["x-kubernetes-int-or-string"] = true
		case "kubebuilder:validation:XValidation":
			args := parseArgs(m.value)
			rule := schema{"rule": args["rule"]}
			for _, k := range []string{"message", "messageExpression", "reason", "fieldPath"} {
				if v, ok := args[k]; ok && v != "" {
					rule[k] = v
				}
			}
			if args["optionalOldSelf"] == "true" {
				rule["optionalOldSelf"] = true
			}
			target["x-kubernetes-validations"] = append(rules(target), rule)
		case "k8s:immutable":
			appendRule(target, "self == oldSelf", "field is immutable")
		case "k8s:required":
			switch {
			case ty == "string":
				setIfMissing(target, "minLength", json.Number("1"))
			case ty == "array":
				setIfMissing(target, "minItems", json.Number("1"))
			case ty == "object", target["$ref"] != nil:
				setIfMissing(target, "minProperties", json.Number("1"))
			}
		case "default", "kubebuilder:default":
			if strings.HasPrefix(m.value, "ref(") {
				// controller-gen skips constants it would have to evaluate.
				continue
			}
			dec := json.NewDecoder(strings.NewReader(m.value))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				c.warn("%s: default %q is not JSON", where, m.value)
				continue
			}
			target["default"] = v
		case "nullable":
			target["nullable"] = true
		case "k8s:enum":
			if values := pkg.enums[where]; len(values) > 0 {
				sorted := append([]string(nil), values...)
				sort.Slice(sorted, func(i, j int) bool { return strconv.Quote(sorted[i]) < strconv.Quote(sorted[j]) })
				target["type"] = "string"
				target["enum"] = toAny(sorted)
			}
		}
	}
}

// sortRequired sorts a schema's required list (controller-gen writes it sorted).
func sortRequired(s schema) {
	if req, ok := s["required"].([]any); ok {
		sort.Slice(req, func(i, j int) bool { return req[i].(string) < req[j].(string) })
	}
}

func rules(s schema) []any {
	r, _ := s["x-kubernetes-validations"].([]any)
	return r
}

func appendRule(s schema, rule, message string) {
	s["x-kubernetes-validations"] = append(rules(s), schema{"rule": rule, "message": message})
}

func setIfMissing(s schema, key string, v any) {
	if _, ok := s[key]; !ok {
		s[key] = v
	}
}

// number renders a marker's number as controller-gen does (a float64).
func number(text string) json.Number {
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		return json.Number(strings.TrimSpace(text))
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '`' && v[len(v)-1] == '`') {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' {
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
	}
	return v
}

// anyValue reads one value of an any-typed marker argument: a number,
// a boolean, a quoted string, or a bare word.
func anyValue(v string) any {
	v = strings.TrimSpace(v)
	if v == "true" || v == "false" {
		return v == "true"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return number(v)
	}
	return unquote(v)
}

// parseArgs splits `a="x, y",b=z` into its key/value pairs.
func parseArgs(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		key := strings.TrimSpace(s[:eq])
		s = s[eq+1:]
		var value string
		switch {
		case strings.HasPrefix(s, `"`):
			end := 1
			for end < len(s) && (s[end] != '"' || s[end-1] == '\\') {
				end++
			}
			value = unquote(s[:min(end+1, len(s))])
			s = s[min(end+1, len(s)):]
		case strings.HasPrefix(s, "`"):
			end := strings.IndexByte(s[1:], '`') + 1
			value = s[1:end]
			s = s[end+1:]
		default:
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			value = strings.TrimSpace(s[:end])
			s = s[end:]
		}
		out[key] = value
		s = strings.TrimPrefix(strings.TrimSpace(s), ",")
	}
	return out
}

// ---- Go sources -------------------------------------------------------------

type goPackage struct {
	types   map[string]*typeInfo
	imports map[string]string   // local name -> import path (union over files)
	enums   map[string][]string // type name -> string constants of that type
}

type typeInfo struct {
	name       string
	markers    []marker
	structType *ast.StructType
	fields     []field
}

type field struct {
	json      string
	inline    bool
	omitEmpty bool
	markers   []marker
	expr      ast.Expr
	pkg       *goPackage
}

func (f field) has(name string) bool {
	for _, m := range f.markers {
		if m.name == name {
			return true
		}
	}
	return false
}

// required is controller-gen's rule: explicit markers first, then every
// field without omitempty/omitzero.
func (f field) required() bool {
	switch {
	case f.has("kubebuilder:validation:Optional"):
		return false
	case f.has("kubebuilder:validation:Required"):
		return true
	case f.has("optional"), f.has("k8s:optional"):
		return false
	case f.has("required"), f.has("k8s:required"):
		return true
	}
	return !f.inline && !f.omitEmpty
}

func (c *converter) pkg(importPath string) *goPackage {
	if importPath == "" {
		return nil
	}
	if p, ok := c.pkgs[importPath]; ok {
		return p
	}
	var dir string
	for mod, root := range c.roots {
		if importPath == mod || strings.HasPrefix(importPath, mod+"/") {
			dir = filepath.Join(root, strings.TrimPrefix(importPath, mod))
		}
	}
	var p *goPackage
	if dir != "" {
		p = scanPackage(dir)
	}
	c.pkgs[importPath] = p
	return p
}

func scanPackage(dir string) *goPackage {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	p := &goPackage{types: map[string]*typeInfo{}, imports: map[string]string{}, enums: map[string][]string{}}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") ||
			strings.HasPrefix(n, "zz_generated") || strings.HasSuffix(n, ".pb.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			p.imports[local] = path
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.TYPE:
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					docs := []*ast.CommentGroup{ts.Doc}
					if len(gd.Specs) == 1 {
						docs = append(docs, gd.Doc)
					}
					info := &typeInfo{name: ts.Name.Name, markers: parseMarkers(docs...)}
					if st, ok := ts.Type.(*ast.StructType); ok {
						info.structType = st
						info.fields = structFields(st)
					}
					p.types[info.name] = info
				}
			case token.CONST:
				var lastType string
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					if id, ok := vs.Type.(*ast.Ident); ok {
						lastType = id.Name
					} else if vs.Type != nil {
						lastType = ""
					}
					if vs.Type == nil && len(vs.Values) > 0 {
						lastType = ""
					}
					for i := range vs.Names {
						if i >= len(vs.Values) || lastType == "" || vs.Type == nil {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, err := strconv.Unquote(lit.Value); err == nil {
								p.enums[lastType] = append(p.enums[lastType], s)
							}
						}
					}
				}
			}
		}
	}
	return p
}

func structFields(st *ast.StructType) []field {
	var out []field
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			tag, _ = strconv.Unquote(f.Tag.Value)
		}
		jsonTag, ok := reflect.StructTag(tag).Lookup("json")
		if !ok || jsonTag == "-" {
			continue
		}
		opts := strings.Split(jsonTag, ",")
		fd := field{json: opts[0], markers: parseMarkers(f.Doc), expr: f.Type}
		for _, o := range opts[1:] {
			switch o {
			case "inline":
				fd.inline = true
			case "omitempty", "omitzero":
				fd.omitEmpty = true
			}
		}
		if fd.json == "" {
			fd.inline = true
		}
		out = append(out, fd)
	}
	return out
}

// ---- JSON helpers -----------------------------------------------------------

func clone(v any) any {
	switch t := v.(type) {
	case schema:
		out := schema{}
		for k, x := range t {
			out[k] = clone(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = clone(x)
		}
		return out
	}
	return v
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
