// Package compat holds the tests that measure drover against Nomad's own
// test suites: nomadapi_test.go runs the test suite of Nomad's Go client
// module (github.com/hashicorp/nomad/api) with drover as the nomad binary
// and compares which tests pass with testdata/nomadapi/passing.txt.
package compat
