package webtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/registry"
)

// Config describes a web-testing environment. The zero value is the shop site with
// the defaults; JSON field names are given in the tags (`baton run webtest
// --env-config '{"strategy":{"budget":500}}'`).
type Config struct {
	// Site is a site given inline; at most one of Site, SiteFile and Generate may be
	// set, and none means the shop (Shop).
	Site *SiteSpec `json:"site,omitempty"`
	// SiteFile is the path of a JSON site file (see Load): a regular file of at most
	// registry.MaxConfigFileBytes. In a configuration from the network (a server's
	// caller), it is a name relative to the folder the server's operator allows
	// (baton serve env --config-dir), and refused when there is none.
	SiteFile string `json:"site_file,omitempty"`
	// Generate draws a random site with Generate.
	Generate *GenerateConfig `json:"generate,omitempty"`
	// Strategy and Motion configure the two agents.
	Strategy StrategyConfig `json:"strategy"`
	Motion   MotionConfig   `json:"motion"`
}

// GenerateConfig asks for a site drawn by Generate.
type GenerateConfig struct {
	// Pages is the number of pages, MinGeneratedPages or more.
	Pages int    `json:"pages"`
	Seed  uint64 `json:"seed"`
}

// StrategyConfig configures the strategy agent.
type StrategyConfig struct {
	// Budget is how many UI operations a test may spend (motion actions, back
	// navigations, the login procedure's operations); 0 means DefaultBudget.
	Budget int `json:"budget,omitempty"`
	// CoverageReward rewards covering the whole site, shared out by coverage unit;
	// nil means 1.
	CoverageReward *float64 `json:"reward_for_coverage,omitempty"`
	// DefectReward rewards each defect found; nil means 1.
	DefectReward *float64 `json:"reward_for_defect,omitempty"`
}

// MotionConfig configures the motion agent.
type MotionConfig struct {
	// MaxSteps is how many UI operations the motion agent may spend on one target
	// before it is truncated; 0 means DefaultMotionMaxSteps.
	MaxSteps int `json:"max_steps,omitempty"`
	// ActionReward rewards every action (a cost); nil means -0.01.
	ActionReward *float64 `json:"reward_per_action,omitempty"`
	// CompletionReward rewards the action that completes the target interaction;
	// nil means 1.
	CompletionReward *float64 `json:"reward_for_completion,omitempty"`
}

// The defaults.
const (
	DefaultBudget           = 1000
	DefaultCoverageReward   = 1.0
	DefaultDefectReward     = 1.0
	DefaultMotionMaxSteps   = 24
	DefaultActionReward     = -0.01
	DefaultCompletionReward = 1.0
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("webtest: invalid configuration")

// ParseConfig reads a JSON configuration; unknown fields are errors. Empty input is the
// zero Config.
func ParseConfig(data []byte) (Config, error) {
	var cfg Config
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if err := registry.DecodeConfig(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return cfg, cfg.withDefaults().validate()
}

func (c Config) withDefaults() Config {
	c.Strategy = c.Strategy.withDefaults()
	c.Motion = c.Motion.withDefaults()
	return c
}

func (c StrategyConfig) withDefaults() StrategyConfig {
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.CoverageReward == nil {
		c.CoverageReward = ptr(DefaultCoverageReward)
	}
	if c.DefectReward == nil {
		c.DefectReward = ptr(DefaultDefectReward)
	}
	return c
}

func (c MotionConfig) withDefaults() MotionConfig {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMotionMaxSteps
	}
	if c.ActionReward == nil {
		c.ActionReward = ptr(DefaultActionReward)
	}
	if c.CompletionReward == nil {
		c.CompletionReward = ptr(DefaultCompletionReward)
	}
	return c
}

func ptr(v float64) *float64 { return &v }

func (c Config) validate() error {
	var errs []error
	if c.Strategy.Budget < 0 {
		errs = append(errs, fmt.Errorf("%w: strategy.budget is %d; want 1 or more", ErrConfig, c.Strategy.Budget))
	}
	if c.Motion.MaxSteps < 0 {
		errs = append(errs, fmt.Errorf("%w: motion.max_steps is %d; want 1 or more", ErrConfig, c.Motion.MaxSteps))
	}
	n := 0
	for _, set := range []bool{c.Site != nil, c.SiteFile != "", c.Generate != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		errs = append(errs, fmt.Errorf("%w: give one of site, site_file and generate", ErrConfig))
	}
	return errors.Join(errs...)
}

// The limit on configurations from the network (registry.Limit; see Register).
const (
	// LimitPages names the limit on the pages of the site a configuration from the
	// network describes, generated, inline or in a site file: webtest.pages, raised
	// with `baton serve env --env-limit webtest.pages=N`.
	LimitPages = "pages"
	// DefaultRemotePages is its default: a site of that many pages takes some 6 MB.
	DefaultRemotePages = 1000
)

// build compiles the site the configuration names. With remote nil, the
// configuration comes from a trusted caller (the command line, a program): a site file
// is read from its path, as registry.ReadConfigFile reads it (a regular file of
// bounded size). With remote, it comes from the network: a site file is read inside
// the folder the server allows only (remote.ReadFile), and a site of more pages than
// the limit LimitPages is refused before it is built.
func (c Config) build(remote *registry.Remote) (*Site, error) {
	pages := func(n int) error {
		if remote == nil {
			return nil
		}
		return remote.Check(LimitPages, int64(n))
	}
	switch {
	case c.Site != nil:
		if err := pages(len(c.Site.Pages)); err != nil {
			return nil, err
		}
		return Compile(*c.Site)
	case c.SiteFile != "":
		var data []byte
		var err error
		if remote != nil {
			data, err = remote.ReadFile("site_file", c.SiteFile)
		} else {
			data, err = registry.ReadConfigFile("site_file", c.SiteFile)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		spec, err := decodeSite(data)
		if err != nil {
			return nil, err
		}
		if err := pages(len(spec.Pages)); err != nil {
			return nil, err
		}
		return Compile(spec)
	case c.Generate != nil:
		g := c.Generate
		if err := pages(g.Pages); err != nil {
			return nil, err
		}
		return Generate(rand.New(rand.NewPCG(g.Seed, g.Seed)), g.Pages)
	default:
		return Shop(), nil
	}
}
