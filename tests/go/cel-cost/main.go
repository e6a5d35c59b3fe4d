// The API server's estimate of the cost of a CRD's CEL rules, the oracle of
// tests/tests/cel_cost_oracle.rs: reads one apiextensions.k8s.io/v1
// CustomResourceDefinition (YAML) on stdin and prints, for each rule of
// each version's schema, one line
//
//	rule <node path> <index> <max cost> <cardinality> <messageExpression max cost>
//
// ("-" for figures the API server has none of: a rule that does not
// compile, a rule without messageExpression), then one line
// per error of the API server's validation of the whole CRD:
//
//	error <field path>: <detail>
//
// It links kube-apiserver's own packages, at the version the test server
// is built from, and calls what the API server calls when a CRD is created.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	internal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	v1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apicel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// visit prints the estimate of every rule at and below s. card is how many
// times s can occur in one object; nil when a list or map above it has no
// bound (the API server then bounds it by the request size).
func visit(s *internal.JSONSchemaProps, path string, resource bool, card *uint64, env *environment.EnvSet) {
	if len(s.XValidations) > 0 {
		structural, err := structuralschema.NewStructural(s)
		if err != nil {
			fail("%s: %v", path, err)
		}
		decl := model.SchemaDeclType(structural, resource || s.XEmbeddedResource)
		results, err := apicel.Compile(structural, decl, celconfig.PerCallLimit, env, apicel.NewExpressionsEnvLoader())
		if err != nil {
			fail("%s: %v", path, err)
		}
		for i, r := range results {
			message := "-"
			if s.XValidations[i].MessageExpression != "" && r.MessageExpressionError == nil {
				message = fmt.Sprint(r.MessageExpressionMaxCost)
			}
			if r.Error != nil {
				fmt.Printf("rule %s %d - - %s\n", path, i, message)
				continue
			}
			c := r.MaxCardinality
			if card != nil {
				c = *card
			}
			fmt.Printf("rule %s %d %d %d %s\n", path, i, r.MaxCost, c, message)
		}
	}
	below := func(bound *int64) *uint64 {
		if card == nil || bound == nil {
			return nil
		}
		v := *card * uint64(*bound)
		return &v
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := s.Properties[name]
		visit(&p, path+".properties["+name+"]", false, card, env)
	}
	if s.Items != nil && s.Items.Schema != nil {
		c := card
		if s.Type == "array" {
			c = below(s.MaxItems)
		}
		visit(s.Items.Schema, path+".items", false, c, env)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		c := card
		if s.Type == "object" {
			c = below(s.MaxProperties)
		}
		visit(s.AdditionalProperties.Schema, path+".additionalProperties", false, c, env)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cel-cost: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading stdin: %v", err)
	}
	var crd v1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		fail("reading the CRD: %v", err)
	}
	v1.SetObjectDefaults_CustomResourceDefinition(&crd)
	var in internal.CustomResourceDefinition
	if err := v1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &in, nil); err != nil {
		fail("converting the CRD: %v", err)
	}
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	one := uint64(1)
	// One schema for all versions is hoisted to spec.validation.
	if in.Spec.Validation != nil {
		visit(in.Spec.Validation.OpenAPIV3Schema, "openAPIV3Schema", true, &one, env)
	}
	for _, v := range in.Spec.Versions {
		if v.Schema != nil {
			visit(v.Schema.OpenAPIV3Schema, "openAPIV3Schema", true, &one, env)
		}
	}
	for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), &in) {
		fmt.Printf("error %s: %s\n", e.Field, strings.ReplaceAll(e.ErrorBody(), "\n", " "))
	}
}
