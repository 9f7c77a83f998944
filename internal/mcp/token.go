package mcp

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/osb-dev/osb/internal/config"
)

// TokenEnv holds the HTTP token when it is not read from a file.
const TokenEnv = "OSB_MCP_TOKEN"

// TokenFile is the file beside the osb config where a generated token is kept.
const TokenFile = "mcp-token"

// minTokenLength keeps guessable tokens out.
const minTokenLength = 16

// TokenSource says where to find the HTTP token: a file the user named,
// else the environment, else the stored token (made on first use).
type TokenSource struct {
	File   string // --token-file
	Env    string // the value of TokenEnv
	Stored string // where a generated token is kept
	APIKey string // the OpenSandbox API key, which the token must never be
}

// Resolve returns the token and where it came from, for the start-up message.
func (t TokenSource) Resolve() (token, from string, err error) {
	switch {
	case t.File != "":
		token, err = readToken(t.File)
		from = t.File
		if errors.Is(err, fs.ErrNotExist) {
			err = usage("cannot read the MCP token file: %v", err)
		}
	case t.Env != "":
		token, from = strings.TrimSpace(t.Env), "$"+TokenEnv
	default:
		token, err = t.stored()
		from = t.Stored
	}
	if err != nil {
		return "", "", err
	}
	if len(token) < minTokenLength {
		return "", "", usage("the MCP token from %s is shorter than %d characters", from, minTokenLength)
	}
	if t.APIKey != "" && token == t.APIKey {
		return "", "", usage("the MCP token from %s is the OpenSandbox API key: give the MCP server a token of its own", from)
	}
	return token, from, nil
}

// stored reads the kept token, or makes one and keeps it (mode 0600).
func (t TokenSource) stored() (string, error) {
	token, err := readToken(t.Stored)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	if err := config.WriteFile(t.Stored, []byte(token+"\n")); err != nil {
		return "", fmt.Errorf("cannot store the MCP token: %w", err)
	}
	return token, nil
}

// readToken reads a token file, refusing one that others may read.
func readToken(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return "", usage("the MCP token file %s can be read by others (mode %04o): run chmod 600 %s", path, info.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
