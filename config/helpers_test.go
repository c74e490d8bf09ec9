package config

import (
	"errors"
	"reflect"
)

// equalConfig compares two configurations, set-tracking included.
func equalConfig(a, b *Config) bool { return reflect.DeepEqual(a, b) }

func errorsIs(err, target error) bool { return errors.Is(err, target) }
