// Command nomadflags reads the command/ directory of a hashicorp/nomad
// checkout and writes internal/nomadcompat/flags_gen.go: every command of
// Nomad's CLI (the deprecated top-level aliases aside) with the flags it
// parses, each with its kind, and whether it takes the global flags
// (Meta.FlagSet with FlagSetClient). It reads the sources only, with
// go/parser: Nomad is never built or imported.
//
//	go run ./scripts/nomadflags -src /path/to/nomad -commit <sha> -version 2.0.6
//
// scripts/nomad-flags.sh fetches the checkout at a commit and runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	src := flag.String("src", "", "root of a hashicorp/nomad checkout")
	commit := flag.String("commit", "", "the checkout's commit")
	version := flag.String("version", "", "Nomad's version at that commit")
	out := flag.String("out", "internal/nomadcompat/flags_gen.go", "file to write")
	flag.Parse()
	if *src == "" || *commit == "" {
		log.Fatal("usage: nomadflags -src DIR -commit SHA [-version V] [-out FILE]")
	}
	cmds, global, err := read(filepath.Join(*src, "command"))
	if err != nil {
		log.Fatal(err)
	}
	b, err := render(cmds, global, *commit, *version)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%s: %d commands, %d global flags\n", *out, len(cmds), len(global))
}

type flagDef struct{ name, kind string }

type command struct {
	path   string
	client bool
	flags  []flagDef
}

// pkgFiles parses the non-test files of one directory.
func pkgFiles(fset *token.FileSet, dir string) ([]*ast.File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			continue // a generated asset file that is absent or too large
		}
		files = append(files, f)
	}
	return files, nil
}

// methods maps a type name to the bodies of its methods.
func methods(files []*ast.File) map[string][]*ast.BlockStmt {
	out := map[string][]*ast.BlockStmt{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil || len(fd.Recv.List) == 0 {
				continue
			}
			t := fd.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				out[id.Name] = append(out[id.Name], fd.Body)
			}
		}
	}
	return out
}

// kinds maps the flag package's definers to a flag's kind.
var kinds = map[string]string{
	"BoolVar": "bool", "StringVar": "string", "IntVar": "int", "Int64Var": "int", "UintVar": "int",
	"Uint64Var": "int", "DurationVar": "duration", "Float64Var": "float", "Var": "value", "TextVar": "value",
}

// flagsIn returns the flags a body defines on any flag set, and whether it
// asks Meta.FlagSet for the client flags.
func flagsIn(body ast.Node) (defs []flagDef, client bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if sel.Sel.Name == "FlagSet" && len(call.Args) == 2 {
			ast.Inspect(call.Args[1], func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && (id.Name == "FlagSetClient" || id.Name == "FlagSetDefault") {
					client = true
				}
				return true
			})
			return true
		}
		kind, ok := kinds[sel.Sel.Name]
		if !ok || len(call.Args) < 2 {
			return true
		}
		if recv, ok := sel.X.(*ast.Ident); !ok || !strings.HasPrefix(strings.ToLower(recv.Name), "f") {
			return true
		}
		lit, ok := call.Args[1].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		name, err := strconv.Unquote(lit.Value)
		if err != nil || name == "" {
			return true
		}
		defs = append(defs, flagDef{name, kind})
		return true
	})
	return defs, client
}

func read(dir string) ([]command, []flagDef, error) {
	fset := token.NewFileSet()
	files, err := pkgFiles(fset, dir)
	if err != nil {
		return nil, nil, err
	}
	byType := map[string]map[string][]*ast.BlockStmt{"": methods(files)}
	// The global flags: Meta.FlagSet's.
	var global []flagDef
	for _, body := range byType[""]["Meta"] {
		if defs, _ := flagsIn(body); len(defs) > len(global) {
			global = defs
		}
	}
	var cmds []command
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			fd, ok := n.(*ast.FuncDecl)
			if !ok || fd.Name.Name != "Commands" || fd.Recv != nil {
				return true
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok {
					return true
				}
				lit, ok := kv.Key.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				fn, ok := kv.Value.(*ast.FuncLit)
				if !ok {
					return true
				}
				path, _ := strconv.Unquote(lit.Value)
				pkg, typ := returnedType(fn)
				if typ == "" || typ == "DeprecatedCommand" {
					return false
				}
				if byType[pkg] == nil {
					pf, err := pkgFiles(fset, filepath.Join(dir, pkg))
					if err != nil {
						log.Printf("%s: %v", path, err)
						return false
					}
					byType[pkg] = methods(pf)
				}
				c := command{path: path}
				seen := map[string]bool{}
				for _, body := range byType[pkg][typ] {
					defs, client := flagsIn(body)
					c.client = c.client || client
					for _, d := range defs {
						if !seen[d.name] {
							seen[d.name] = true
							c.flags = append(c.flags, d)
						}
					}
				}
				sort.Slice(c.flags, func(i, j int) bool { return c.flags[i].name < c.flags[j].name })
				cmds = append(cmds, c)
				return false
			})
			return false
		})
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].path < cmds[j].path })
	return cmds, global, nil
}

// returnedType is the type a command factory returns: &T{...} or
// &pkg.T{...}.
func returnedType(fn *ast.FuncLit) (pkg, typ string) {
	for _, st := range fn.Body.List {
		ret, ok := st.(*ast.ReturnStmt)
		if !ok || len(ret.Results) == 0 {
			continue
		}
		u, ok := ret.Results[0].(*ast.UnaryExpr)
		if !ok {
			continue
		}
		cl, ok := u.X.(*ast.CompositeLit)
		if !ok {
			continue
		}
		switch t := cl.Type.(type) {
		case *ast.Ident:
			return "", t.Name
		case *ast.SelectorExpr:
			if x, ok := t.X.(*ast.Ident); ok {
				return x.Name, t.Sel.Name
			}
		}
	}
	return "", ""
}

func render(cmds []command, global []flagDef, commit, version string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by scripts/nomadflags from hashicorp/nomad's command/ at %s. DO NOT EDIT.\n\n", commit)
	b.WriteString("package nomadcompat\n\n")
	fmt.Fprintf(&b, "// NomadCommit is the hashicorp/nomad commit the flag table was read from.\nconst NomadCommit = %q\n\n", commit)
	fmt.Fprintf(&b, "// NomadVersion is Nomad's version at NomadCommit.\nconst NomadVersion = %q\n\n", version)
	b.WriteString("// GlobalFlags are the flags of every Nomad command that talks to an agent\n// (Meta.FlagSet with FlagSetClient).\nvar GlobalFlags = []Flag{\n")
	for _, f := range global {
		fmt.Fprintf(&b, "\t{%q, %q},\n", f.name, f.kind)
	}
	b.WriteString("}\n\n// NomadFlags are the flags of each of Nomad's commands, by path after\n// \"nomad\"; Client says the command also takes GlobalFlags.\nvar NomadFlags = map[string]CommandFlags{\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t%q: {Client: %v, Flags: []Flag{", c.path, c.client)
		for i, f := range c.flags {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{%q, %q}", f.name, f.kind)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
