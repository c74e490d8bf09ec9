//go:build tools

// This file pins the dependencies drover's packages are built on, so that
// packages developed side by side resolve the same versions.
package drover

import (
	_ "github.com/hashicorp/go-hclog"
	_ "github.com/hashicorp/go-memdb"
	_ "github.com/hashicorp/go-msgpack/v2/codec"
	_ "github.com/hashicorp/hcl/v2"
	_ "github.com/hashicorp/hcl/v2/hclsyntax"
	_ "github.com/hashicorp/nomad/api"
	_ "github.com/hashicorp/raft"
	_ "github.com/hashicorp/raft-boltdb/v2"
	_ "github.com/zclconf/go-cty/cty"
	_ "github.com/zclconf/go-cty/cty/function/stdlib"
	_ "go.etcd.io/bbolt"
)
