package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/spf13/cobra"
)

func init() { registerCommand("fmt", newFmtCommand) }

// fmtExtensions are the files fmt takes from a directory: job files and
// agent configuration, as Nomad's fmt.
var fmtExtensions = []string{".nomad", ".hcl"}

func newFmtCommand() *cobra.Command {
	var check, recursive, list, write bool
	cmd := &cobra.Command{
		Use:   "fmt [flags] [PATH...]",
		Short: "Rewrite HCL job and configuration files in the canonical format",
		Long: `Rewrites HCL files (.nomad, .hcl, .nomad.hcl) in the canonical layout and
style: indentation, aligned equals signs, spacing. PATH is a file, a
directory (its HCL files; -recursive for the directories below), or "-" for
standard input (written to standard output); the current directory when
none is given. The names of the files it changes are listed.

A file that is not valid HCL syntax is an error naming its file, line and
column, and is left untouched; the exit status is then 1. -check changes
nothing and exits 1 if any file is not already formatted.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			f := &formatter{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), check: check, list: list, write: write && !check}
			for _, p := range args {
				if p == "-" {
					f.stdin(cmd.InOrStdin())
					continue
				}
				f.path(p, recursive)
			}
			if f.failed || (check && f.changed) {
				return exitCode(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "change nothing; exit 1 if any file is not formatted")
	cmd.Flags().BoolVar(&recursive, "recursive", false, "also format the HCL files of the directories below")
	cmd.Flags().BoolVar(&list, "list", true, "list the files whose formatting differs")
	cmd.Flags().BoolVar(&write, "write", true, "write the result back to the file")
	return cmd
}

type formatter struct {
	out, errOut        io.Writer
	check, list, write bool
	changed, failed    bool
}

// path formats a file, or the HCL files of a directory.
func (f *formatter) path(p string, recursive bool) {
	info, err := os.Stat(p)
	if err != nil {
		fmt.Fprintf(f.errOut, "Error: %v\n", err)
		f.failed = true
		return
	}
	if !info.IsDir() {
		f.file(p)
		return
	}
	err = filepath.WalkDir(p, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != p && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if hasHCLExtension(name) {
			f.file(name)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(f.errOut, "Error: %v\n", err)
		f.failed = true
	}
}

func hasHCLExtension(name string) bool {
	for _, ext := range fmtExtensions {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

func (f *formatter) file(name string) {
	src, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintf(f.errOut, "Error: %v\n", err)
		f.failed = true
		return
	}
	out, ok := f.format(name, src)
	if !ok || bytes.Equal(src, out) {
		return
	}
	f.changed = true
	if f.list {
		fmt.Fprintln(f.out, name)
	}
	if f.write {
		info, err := os.Stat(name)
		mode := fs.FileMode(0o644)
		if err == nil {
			mode = info.Mode().Perm()
		}
		if err := os.WriteFile(name, out, mode); err != nil {
			fmt.Fprintf(f.errOut, "Error: %v\n", err)
			f.failed = true
		}
	}
}

func (f *formatter) stdin(r io.Reader) {
	src, err := io.ReadAll(r)
	if err != nil {
		fmt.Fprintf(f.errOut, "Error: reading standard input: %v\n", err)
		f.failed = true
		return
	}
	out, ok := f.format("<stdin>", src)
	if !ok {
		return
	}
	if !bytes.Equal(src, out) {
		f.changed = true
	}
	if !f.check {
		_, _ = f.out.Write(out)
	}
}

// format checks src's syntax, reporting every error with its place, and
// returns it formatted.
func (f *formatter) format(name string, src []byte) ([]byte, bool) {
	_, diags := hclsyntax.ParseConfig(src, name, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		for _, d := range diags {
			if d.Severity != hcl.DiagError {
				continue
			}
			where := name
			if d.Subject != nil {
				where = fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
			}
			fmt.Fprintf(f.errOut, "%s: %s; %s\n", where, d.Summary, d.Detail)
		}
		f.failed = true
		return nil, false
	}
	return hclwrite.Format(src), true
}
