package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/spf13/cobra"
	"github.com/zclconf/go-cty/cty"

	"github.com/droverhq/drover/structs"
)

// Nomad's node pool specification: one node_pool "NAME" { … } block in
// HCL, or the api.NodePool object in JSON.
//
//	node_pool "NAME" {
//	  description       = "…"
//	  node_identity_ttl = "24h"
//	  meta { key = "value" }
//	  scheduler_config {
//	    scheduler_algorithm             = "binpack" | "spread"
//	    memory_oversubscription_enabled = true | false
//	  }
//	}

// parseNodePoolSpec reads a specification: JSON when fromJSON is set or
// the text is a JSON object, HCL otherwise.
func parseNodePoolSpec(name string, data []byte, fromJSON bool) (*structs.NodePool, error) {
	if fromJSON || strings.HasPrefix(strings.TrimSpace(string(data)), "{") {
		var p structs.NodePool
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &p, nil
	}
	return parseNodePoolHCL(name, data)
}

// parseNodePoolHCL reads the HCL specification; an unknown attribute or
// block, or a value of the wrong type, is an error naming the file and
// the field.
func parseNodePoolHCL(name string, src []byte) (*structs.NodePool, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	if len(body.Attributes) > 0 || len(body.Blocks) != 1 || body.Blocks[0].Type != "node_pool" {
		return nil, fmt.Errorf("%s: want one node_pool block", name)
	}
	b := body.Blocks[0]
	if len(b.Labels) != 1 {
		return nil, fmt.Errorf("%s: the node_pool block needs a name label", b.DefRange())
	}
	p := &structs.NodePool{Name: b.Labels[0]}
	for n, a := range b.Body.Attributes {
		switch n {
		case "description":
			v, err := specString(a, "node_pool.description")
			if err != nil {
				return nil, err
			}
			p.Description = v
		case "node_identity_ttl":
			v, err := specString(a, "node_pool.node_identity_ttl")
			if err != nil {
				return nil, err
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("%s: node_pool.node_identity_ttl: %v", a.SrcRange, err)
			}
			p.NodeIdentityTTL = d
		default:
			return nil, fmt.Errorf("%s: node_pool: unknown attribute %q", a.SrcRange, n)
		}
	}
	seen := map[string]bool{}
	for _, blk := range b.Body.Blocks {
		if seen[blk.Type] {
			return nil, fmt.Errorf("%s: node_pool: block %q given twice", blk.DefRange(), blk.Type)
		}
		seen[blk.Type] = true
		if len(blk.Body.Blocks) > 0 {
			return nil, fmt.Errorf("%s: node_pool.%s: unexpected block %q", blk.Body.Blocks[0].DefRange(), blk.Type, blk.Body.Blocks[0].Type)
		}
		switch blk.Type {
		case "meta":
			p.Meta = map[string]string{}
			for k, a := range blk.Body.Attributes {
				v, err := specString(a, "node_pool.meta."+k)
				if err != nil {
					return nil, err
				}
				p.Meta[k] = v
			}
		case "scheduler_config":
			sc := &structs.NodePoolSchedulerConfiguration{}
			for k, a := range blk.Body.Attributes {
				field := "node_pool.scheduler_config." + k
				switch k {
				case "scheduler_algorithm":
					v, err := specString(a, field)
					if err != nil {
						return nil, err
					}
					sc.SchedulerAlgorithm = v
				case "memory_oversubscription_enabled":
					v, d := a.Expr.Value(nil)
					if d.HasErrors() {
						return nil, d
					}
					if v.IsNull() || v.Type() != cty.Bool {
						return nil, fmt.Errorf("%s: %s must be true or false", a.SrcRange, field)
					}
					enabled := v.True()
					sc.MemoryOversubscriptionEnabled = &enabled
				default:
					return nil, fmt.Errorf("%s: node_pool.scheduler_config: unknown attribute %q", a.SrcRange, k)
				}
			}
			p.SchedulerConfiguration = sc
		default:
			return nil, fmt.Errorf("%s: node_pool: unknown block %q", blk.DefRange(), blk.Type)
		}
	}
	return p, nil
}

// specString reads a string attribute (a number or a bool is taken as
// its text, as HCL converts them).
func specString(a *hclsyntax.Attribute, field string) (string, error) {
	v, d := a.Expr.Value(nil)
	if d.HasErrors() {
		return "", d
	}
	if v.IsNull() || !v.IsKnown() {
		return "", fmt.Errorf("%s: %s must be a string", a.SrcRange, field)
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), nil
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), nil
	case cty.Bool:
		return fmt.Sprint(v.True()), nil
	}
	return "", fmt.Errorf("%s: %s must be a string", a.SrcRange, field)
}

// Nomad's file names and examples of node pool init.
const (
	nodePoolInitHCLName  = "pool.nomad.hcl"
	nodePoolInitJSONName = "pool.nomad.json"
)

const nodePoolExampleHCL = `node_pool "example" {

  description = "Example node pool"

  # meta is optional metadata on the node pool, defined as key-value pairs.
  # The scheduler does not use node pool metadata.
  meta {
    environment = "prod"
    owner       = "sre"
  }

  # node_identity_ttl is stored and shown; it defaults to "24h".
  # node_identity_ttl = "24h"

  # scheduler_config is stored and shown. drover's scheduler has one
  # algorithm and no memory oversubscription, so it changes nothing.
  # scheduler_config {
  #   scheduler_algorithm             = "spread"
  #   memory_oversubscription_enabled = true
  # }
}
`

const nodePoolExampleJSON = `{
  "Name": "example",
  "Description": "Example node pool",
  "Meta": {
    "environment": "prod",
    "owner": "sre"
  }
}
`

func newNodePoolInitCommand() *cobra.Command {
	var out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "init [-out hcl|json] [-quiet] [FILE]",
		Short: "Write an example node pool specification (pool.nomad.hcl, or pool.nomad.json with -out json)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, content := nodePoolInitHCLName, nodePoolExampleHCL
			switch out {
			case "hcl":
			case "json":
				name, content = nodePoolInitJSONName, nodePoolExampleJSON
			default:
				return &exitError{code: 1, msg: fmt.Sprintf("Invalid -out %q: want hcl or json", out)}
			}
			if len(args) == 1 {
				name = args[0]
			}
			if _, err := os.Stat(name); err == nil {
				return &exitError{code: 1, msg: fmt.Sprintf("File %q already exists", name)}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to stat %q: %v", name, err)}
			}
			if err := os.WriteFile(name, []byte(content), 0o660); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to write %q: %v", name, err)}
			}
			if !quiet {
				fmt.Fprintf(cmd.OutOrStdout(), "Example node pool specification written to %s\n", name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "hcl", "format of the specification: hcl or json")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "print nothing on success")
	return cmd
}
