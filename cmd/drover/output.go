package main

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/spf13/cobra"
)

// outputFlags are the -json and -t flags of the read commands, as
// Nomad's: -json prints what the API answers, -t formats it with a Go
// template ('{{.ID}}', '{{range .}}{{.Status}}{{end}}').
type outputFlags struct {
	json bool
	tmpl string
}

func (o *outputFlags) add(cmd *cobra.Command) { addOutputFlags(cmd, &o.json, &o.tmpl) }

// addOutputFlags is the one definition of -json and -t, bound to json and
// tmpl: every read command that has them in Nomad gets them here (through
// outputFlags.add or opFlags.addJSON), and prints through
// outputFlags.write.
func addOutputFlags(cmd *cobra.Command, json *bool, tmpl *string) {
	cmd.Flags().BoolVar(json, "json", false, "print the API's answer as JSON")
	cmd.Flags().StringVarP(tmpl, "t", "t", "", "format the API's answer with a Go template")
}

// set reports whether -json or -t was given.
func (o *outputFlags) set() bool { return o.json || o.tmpl != "" }

// write prints v as -json or -t ask. A template that does not parse, or
// names a field the answer does not have, is a one-line error (exit 1)
// and prints nothing.
func (o *outputFlags) write(cmd *cobra.Command, v any) error {
	if o.json && o.tmpl != "" {
		return &exitError{code: 1, msg: "Both json and template formatting are not allowed"}
	}
	if o.json {
		return writeJSON(cmd, v)
	}
	t, err := template.New("format").Option("missingkey=error").Parse(o.tmpl)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error formatting the data: %v", err)}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error formatting the data: %v", err)}
	}
	_, err = cmd.OutOrStdout().Write(b.Bytes())
	return err
}
