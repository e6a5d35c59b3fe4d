// Command flect-plurals prints, for each kind read from stdin (one per
// line), the plural controller-gen gives it: the lower-cased result of
// flect's Pluralize, as controller-tools' crd/spec.go computes the
// default `spec.names.plural`. It is the oracle of
// tests/tests/flect_plurals.rs.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/gobuffalo/flect"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		kind := in.Text()
		fmt.Fprintf(out, "%s\t%s\n", kind, strings.ToLower(flect.Pluralize(kind)))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
