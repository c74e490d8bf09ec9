package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func newVarPutCommand() *cobra.Command {
	var address, ns, in, out, tmpl string
	var checkIndex uint64
	var force, verbose bool
	cmd := &cobra.Command{
		Use:   "put [options] PATH|@SPEC|- [@SPEC|-] [KEY=VALUE]...",
		Short: "Create or update a variable",
		Long: `Create or update the variable at PATH, or at the path its specification
names. A specification (var init writes one) is read from @FILE, or from
standard input with "-"; its format is HCL or JSON, by the file's extension
or -in (standard input: JSON unless -in says hcl). KEY=VALUE arguments add
or replace items; a VALUE of @FILE reads the file, "-" standard input.

A put is a check-and-set, as Nomad's: it succeeds only if the variable's
ModifyIndex on the servers is the check index, the specification's
modify_index or -check-index (0, the default, when the variable must not
exist yet). -force writes whatever the servers hold.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns = namespaceFlag(cmd)
			w := cmd.OutOrStdout()
			if out == "" {
				out = defaultVarOut(w, "none")
			}
			if err := checkOutFormat(out, tmpl); err != nil {
				return err
			}
			if in != "" && in != "hcl" && in != "json" {
				return &exitError{code: 1, msg: fmt.Sprintf("Invalid -in value %q: hcl or json", in)}
			}
			stdinUsed := false
			readRef := func(ref string) (string, []byte, error) {
				if ref == "-" {
					if stdinUsed {
						return "", nil, errors.New("standard input can be read only once")
					}
					stdinUsed = true
					b, err := io.ReadAll(cmd.InOrStdin())
					return "<stdin>", b, err
				}
				name := strings.TrimPrefix(ref, "@")
				b, err := os.ReadFile(name)
				return name, b, err
			}
			isRef := func(a string) bool { return a == "-" || strings.HasPrefix(a, "@") }

			v := &structs.Variable{Items: structs.VariableItems{}}
			specIndex := uint64(0)
			rest := args
			var specRef string
			if isRef(rest[0]) {
				specRef, rest = rest[0], rest[1:]
			} else {
				v.Path, rest = rest[0], rest[1:]
				if len(rest) > 0 && isRef(rest[0]) {
					specRef, rest = rest[0], rest[1:]
				}
			}
			if specRef != "" {
				name, src, err := readRef(specRef)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error reading variable specification: %v", err)}
				}
				format := in
				if format == "" {
					format = "json"
					if specRef != "-" && filepath.Ext(name) != ".json" {
						format = "hcl"
					}
				}
				spec, hasIndex, err := parseVarSpec(name, src, format)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error parsing variable specification: %v", err)}
				}
				if v.Path == "" {
					v.Path = spec.Path
				}
				if ns == "" && spec.Namespace != "" {
					ns = spec.Namespace
				}
				for k, val := range spec.Items {
					v.Items[k] = val
				}
				if hasIndex {
					specIndex = spec.ModifyIndex
				}
			}
			for _, kv := range rest {
				k, val, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return &exitError{code: 1, msg: fmt.Sprintf("Invalid item %q: want KEY=VALUE", kv)}
				}
				if isRef(val) {
					_, b, err := readRef(val)
					if err != nil {
						return &exitError{code: 1, msg: fmt.Sprintf("Error reading item %q: %v", k, err)}
					}
					val = strings.TrimSuffix(string(b), "\n")
				}
				v.Items[k] = val
			}
			if v.Path == "" {
				return &exitError{code: 1, msg: "Missing path: give it as the first argument or in the specification"}
			}
			if len(v.Items) == 0 {
				return &exitError{code: 1, msg: "No items: a variable needs at least one KEY=VALUE item"}
			}
			if v.Namespace = ns; v.Namespace == "" {
				v.Namespace = "default"
			}
			check := specIndex
			if cmd.Flags().Changed("check-index") {
				check = checkIndex
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if verbose {
				fmt.Fprintf(cmd.ErrOrStderr(), "Writing to path %q in namespace %q\n", v.Path, v.Namespace)
			}
			written, err := c.VarPut(cmd.Context(), v.Namespace, v, !force, check)
			var conflict *apiclient.ErrCASConflict
			if errors.As(err, &conflict) {
				return casConflictError(check, conflict.Current)
			}
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error creating variable: %v", err)}
			}
			if out == "none" {
				verb := "Created"
				if written.CreateIndex != written.ModifyIndex {
					verb = "Updated"
				}
				fmt.Fprintf(w, "%s variable %q with modify index %d\n", verb, written.Path, written.ModifyIndex)
				return nil
			}
			return printVariable(w, written, out, tmpl)
		},
	}
	fs := cmd.Flags()
	fs.Uint64Var(&checkIndex, "check-index", 0, "write only if the variable's modify index is this (0: only if it does not exist)")
	fs.BoolVar(&force, "force", false, "write regardless of the variable's modify index on the servers")
	fs.StringVar(&in, "in", "", "format of the specification: hcl or json (default: by extension; json on standard input)")
	fs.StringVar(&out, "out", "", "output format: go-template, hcl, json, none or table")
	fs.StringVar(&tmpl, "template", "", "Go template for -out go-template")
	fs.BoolVar(&verbose, "verbose", false, "say what is written, on standard error")
	addAddressFlag(cmd, &address)
	return cmd
}

// casConflictError explains a check-and-set conflict, as Nomad's.
func casConflictError(check uint64, cur *structs.Variable) error {
	msg := fmt.Sprintf("Error: Check-and-Set conflict\n\nYour provided check-index (%d) does not match the server-side index (%d).", check, cur.ModifyIndex)
	if cur.ModifyIndex > 0 {
		msg += fmt.Sprintf(" The server-side item was last updated on %s.", formatTime(cur.ModifyTime))
	}
	msg += fmt.Sprintf("\n\nIf you are sure you want to perform this operation, add the -force or -check-index=%d flag before the positional arguments.", cur.ModifyIndex)
	return &exitError{code: 1, msg: msg}
}
