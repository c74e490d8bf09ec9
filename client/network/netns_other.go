//go:build !linux

package network

import "errors"

var errNotLinux = errors.New("network namespaces need Linux")

func createNetNS(string) error             { return errNotLinux }
func removeNetNS(string) error             { return nil }
func isNetNS(string) bool                  { return false }
func withNetNS(string, func() error) error { return errNotLinux }
