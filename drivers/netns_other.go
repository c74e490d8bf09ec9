//go:build !linux

package drivers

import "errors"

// StartInNetNS calls start; network namespaces exist on Linux only.
func StartInNetNS(path string, start func() error) error {
	if path != "" {
		return errors.New("network namespaces need Linux")
	}
	return start()
}
