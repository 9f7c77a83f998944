// Package cmdutil is what the verbs share about cobra: the verb builder,
// its arguments and flag kinds, completion, suggestions, and the Factory
// the builder hands each verb its configuration, client and streams from.
// What is not about cobra is in ops, for MCP's tools too.
package cmdutil

import (
	"sync"
	"time"

	"github.com/osb-dev/osb/internal/build"
	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/config"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// Factory gives commands their dependencies, built lazily so that commands
// that need no server (config, skills, completion) never touch one.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Getenv    func(string) string
	Flags     config.Flags // the root's connection flags, filled in by parsing
	Verbose   bool
	Now       func() time.Time

	// ClientOptions, when set, adjusts the client before it is built (tests).
	ClientOptions func(*client.Options)
	// CompletionBudget, when set, replaces the 2 s a Tab completion may
	// wait on the server (tests on a loaded machine).
	CompletionBudget time.Duration

	configOnce sync.Once
	config     *config.Config
	configErr  error
	clientOnce sync.Once
	client     *client.Client
	clientErr  error
}

// New returns a Factory over the given streams and environment.
func New(ios *iostreams.IOStreams, getenv func(string) string) *Factory {
	return &Factory{IOStreams: ios, Getenv: getenv, Now: time.Now}
}

// Config resolves the configuration once.
func (f *Factory) Config() (*config.Config, error) {
	f.configOnce.Do(func() {
		f.config, f.configErr = config.Load(f.Flags, f.Getenv)
		if f.configErr != nil {
			f.configErr = &ops.ExitError{Code: ops.ExitUsage, Err: f.configErr}
		}
	})
	return f.config, f.configErr
}

// ConfigPath is the config file osb reads and writes.
func (f *Factory) ConfigPath() string {
	return config.PathFor(f.Flags.ConfigPath, f.Getenv)
}

// Client builds the API client from the configuration once.
func (f *Factory) Client() (*client.Client, error) {
	f.clientOnce.Do(func() {
		cfg, err := f.Config()
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				err = &ops.ExitError{Code: ops.ExitUsage, Err: verr}
			}
		}
		if err != nil {
			f.clientErr = err
			return
		}
		opts := client.Options{
			Domain:         cfg.EffectiveDomain(),
			Protocol:       cfg.Protocol,
			APIKey:         cfg.APIKey,
			RequestTimeout: time.Duration(cfg.RequestTimeout * float64(time.Second)),
			IdleTimeout:    time.Duration(cfg.IdleTimeout * float64(time.Second)),
			UseServerProxy: cfg.UseServerProxy,
			ExecdToken:     f.Getenv("OPEN_SANDBOX_EXECD_ACCESS_TOKEN"),
			UserAgent:      "osb/" + build.Version,
		}
		if f.Verbose {
			opts.Debug = f.IOStreams.ErrOut
		}
		if f.ClientOptions != nil {
			f.ClientOptions(&opts)
		}
		f.client, f.clientErr = client.New(opts)
		if f.clientErr != nil {
			f.clientErr = &ops.ExitError{Code: ops.ExitUsage, Err: f.clientErr}
		}
	})
	return f.client, f.clientErr
}

// Printer returns a printer for the format a command resolved.
func (f *Factory) Printer(format string) *output.Printer {
	return output.New(f.IOStreams, format)
}
