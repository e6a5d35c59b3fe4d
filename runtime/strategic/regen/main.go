// Command regen builds the fake API server's table of how Kubernetes'
// built-in kinds merge (runtime/src/testing/strategic.tsv) from the OpenAPI
// v3 definitions in k8s.io/kubernetes' api/openapi-spec/v3: the Go types'
// patchStrategy and patchMergeKey tags (x-kubernetes-patch-strategy and
// x-kubernetes-patch-merge-key) for strategic merge patches, and the list
// and map types server-side apply reads as kube-openapi's schemaconv does
// (x-kubernetes-list-type with x-kubernetes-list-map-keys, or else a merge
// patch strategy; x-kubernetes-map-type).
//
// Usage (see ../regen.sh, which resolves the module directory):
//
//	regen -out strategic.tsv <openapi-v3-dir>
//
// Output lines, after comment lines starting with '#':
//
//	kind TAB <apiVersion> TAB <Kind> TAB <definition>
//	field TAB <definition> TAB <json name> TAB <shape> TAB <definition of the value or -> TAB <strategy or -> TAB <merge key or ->
//	      TAB <apply list type: set, map or -> TAB <apply list keys or -> TAB <atomic or ->
//
// where shape is `object`, `list` (the definition is the items') or `map`
// (the definition is the values'). Apply list keys are comma-separated,
// each `name` or `name=<JSON default>`. The last column says whether the
// value (object shape), the map itself (map shape) or the items (list
// shape) are replaced as a whole by server-side apply (the property's
// x-kubernetes-map-type, or else its definition's). Only fields on a path from a
// kind to a field with a patch strategy, a set or list-map, an atomic value
// or a map of objects are listed: every other field merges as in a JSON
// merge patch and, for apply, as a struct of granular fields with atomic
// lists, which is what a missing entry means.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type schema = map[string]any

type field struct {
	def, name, shape, target, strategy, mergeKey string
	// For server-side apply.
	listType, listKeys string
	atomic             bool
	// A map whose values are objects: its keys are not struct fields.
	mapOfObjects bool
}

// interesting is whether the field merges differently from a JSON merge
// patch or from an apply of a struct with granular fields and atomic lists.
func (f field) interesting() bool {
	return f.strategy != "" || f.listType != "" || f.atomic || f.mapOfObjects
}

const rawExtension = "io.k8s.apimachinery.pkg.runtime.RawExtension"

func main() {
	out := flag.String("out", "strategic.tsv", "output file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: regen -out FILE <openapi-v3-dir>")
		os.Exit(2)
	}
	defs, err := loadDefinitions(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	// Definitions server-side apply replaces as a whole (RawExtension is
	// untyped and atomic in schemaconv).
	atomicDefs := map[string]bool{rawExtension: true}
	for name, def := range defs {
		if str(def, "x-kubernetes-map-type") == "atomic" {
			atomicDefs[name] = true
		}
	}

	// Every object-, list- or map-valued field, with its strategy.
	byDef := map[string][]field{}
	for name, def := range defs {
		props, _ := def["properties"].(schema)
		for prop, v := range props {
			p, _ := v.(schema)
			f := field{def: name, name: prop, strategy: str(p, "x-kubernetes-patch-strategy"), mergeKey: str(p, "x-kubernetes-patch-merge-key")}
			switch {
			case p["type"] == "array":
				f.shape = "list"
				items, _ := p["items"].(schema)
				f.target = ref(items)
				f.listType, f.listKeys = applyList(p, defs[f.target])
				f.atomic = mapType(items, f.target, atomicDefs)
			case p["type"] == "object" && p["additionalProperties"] != nil:
				f.shape = "map"
				values, _ := p["additionalProperties"].(schema)
				f.target = ref(values)
				f.atomic = str(p, "x-kubernetes-map-type") == "atomic"
				f.mapOfObjects = defs[f.target]["type"] == "object"
			case ref(p) != "":
				f.shape = "object"
				f.target = ref(p)
				f.atomic = mapType(p, f.target, atomicDefs)
			default:
				continue
			}
			byDef[name] = append(byDef[name], f)
		}
	}

	// The definitions from which a field with a strategy can be reached.
	relevant := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, fields := range byDef {
			if relevant[name] {
				continue
			}
			for _, f := range fields {
				if f.interesting() || relevant[f.target] {
					relevant[name] = true
					changed = true
					break
				}
			}
		}
	}

	var lines []string
	for name, def := range defs {
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		if !relevant[name] {
			continue
		}
		for _, g := range gvks {
			gvk, _ := g.(schema)
			group, version, kind := str(gvk, "group"), str(gvk, "version"), str(gvk, "kind")
			if strings.HasSuffix(kind, "List") || kind == "WatchEvent" || kind == "DeleteOptions" {
				continue
			}
			apiVersion := version
			if group != "" {
				apiVersion = group + "/" + version
			}
			lines = append(lines, strings.Join([]string{"kind", apiVersion, kind, name}, "\t"))
		}
	}
	for name, fields := range byDef {
		if !relevant[name] {
			continue
		}
		for _, f := range fields {
			if !f.interesting() && !relevant[f.target] {
				continue
			}
			atomic := ""
			if f.atomic {
				atomic = "atomic"
			}
			lines = append(lines, strings.Join([]string{"field", f.def, f.name, f.shape, dash(f.target), dash(f.strategy), dash(f.mergeKey),
				dash(f.listType), dash(f.listKeys), dash(atomic)}, "\t"))
		}
	}

	sort.Strings(lines)
	header := "# How Kubernetes' built-in kinds merge (strategic merge patch, server-side apply), for the fake API server.\n" +
		"# Generated by runtime/strategic/regen.sh from the OpenAPI v3 definitions of k8s.io/kubernetes; do not edit.\n"
	if err := os.WriteFile(*out, []byte(header+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// applyList is the list type and keys server-side apply gives a list, as
// schemaconv reads them: x-kubernetes-list-type (with its map keys), or
// else a merge patch strategy (keyed by the merge key, a set without one).
// Keys with a default in the item definition carry it.
func applyList(p schema, item schema) (string, string) {
	var keys []string
	switch str(p, "x-kubernetes-list-type") {
	case "set":
		return "set", ""
	case "map":
		list, _ := p["x-kubernetes-list-map-keys"].([]any)
		for _, k := range list {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
	case "":
		switch str(p, "x-kubernetes-patch-strategy") {
		case "merge", "merge,retainKeys":
			key := str(p, "x-kubernetes-patch-merge-key")
			if key == "" {
				return "set", ""
			}
			keys = []string{key}
		default:
			return "", ""
		}
	default:
		return "", ""
	}
	props, _ := item["properties"].(schema)
	for i, k := range keys {
		prop, _ := props[k].(schema)
		if d, ok := prop["default"]; ok {
			b, err := json.Marshal(d)
			if err != nil {
				panic(err)
			}
			keys[i] = k + "=" + string(b)
		}
	}
	return "map", strings.Join(keys, ",")
}

// mapType is whether a property (or list items) referring to def is
// replaced as a whole: its own x-kubernetes-map-type, or else the
// definition's.
func mapType(p schema, def string, atomicDefs map[string]bool) bool {
	switch str(p, "x-kubernetes-map-type") {
	case "atomic":
		return true
	case "granular":
		return false
	}
	return atomicDefs[def]
}

func str(s schema, key string) string {
	v, _ := s[key].(string)
	return v
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ref is the definition a property refers to, directly or through allOf.
func ref(p schema) string {
	if r, ok := p["$ref"].(string); ok {
		return r[strings.LastIndex(r, "/")+1:]
	}
	if all, ok := p["allOf"].([]any); ok && len(all) == 1 {
		if s, ok := all[0].(schema); ok {
			return ref(s)
		}
	}
	return ""
}

// loadDefinitions reads every components.schemas entry of the v3 spec files
// (the first file in name order wins for a definition found in several).
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
				Schemas map[string]schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for name, s := range doc.Components.Schemas {
			if _, ok := defs[name]; !ok {
				defs[name] = s
			}
		}
	}
	return defs, nil
}
