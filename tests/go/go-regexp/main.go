// Command go-regexp prints, for each pattern read from stdin (one per
// line), whether Go's regexp package compiles it, as kube-apiserver
// compiles a CRD schema's `pattern`: "ok", or "error" and the message. It
// is the oracle of tests/tests/go_regex_patterns.rs.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		if _, err := regexp.Compile(in.Text()); err != nil {
			fmt.Fprintf(out, "error\t%s\n", err)
		} else {
			fmt.Fprintln(out, "ok")
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
