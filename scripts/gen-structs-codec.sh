#!/bin/sh
# Regenerates structs/codec_generated.go: MessagePack encoders and decoders
# of the structs package's types, written by go-msgpack's own generator
# (codecgen), so that the servers' log entries, snapshots and the clients'
# protocol are encoded without reflection. The encoding is the same
# (structs/codec_generated_test.go checks each type against the
# reflection path and fails when the file is stale). Run after changing a
# type of package structs: make generate.
set -eu
cd "$(dirname "$0")/../structs"
rm -f codec_generated.go
files=$(ls *.go | grep -v '_test\.go$')
# -d fixes the generated names' suffix, so that the file is the same on
# every run.
go run github.com/hashicorp/go-msgpack/v2/codec/codecgen -d 48 \
	-c github.com/hashicorp/go-msgpack/v2/codec -o codec_generated.go $files
