//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

const fdPassed = 1 << 24

func configSocket() (server, init *os.File, err error) {
	return nil, nil, errors.New("sandbox namespaces need Linux")
}

func sendConfig(*os.File, []*os.File, initConfig) error {
	return errors.New("sandbox namespaces need Linux")
}

func sendEarly(*os.File, *initConfig) error { return errors.New("sandbox namespaces need Linux") }
