//go:build !cgo

package exec

const builtWithCgo = false
