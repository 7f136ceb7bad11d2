// Package webui is baton's page for people: in a browser, a person starts trials,
// plays agents, rewards them and watches trials live. `baton serve ui` serves it
// next to the trial service, on the same address.
//
// What you touch here: call Handler to serve the page (baton serve ui does); implement
// nothing: an environment is drawn through its registry entry.
//
// # What the page does
//
// The page is laid out for a first-time visitor, on a laptop (the start form beside
// the game and the trial list) and on a phone (one after the other, no wider than the
// screen, the trial list as cards). It starts a trial of a registered environment,
// with its JSON configuration, seed, episodes and tick limit, and for each agent one
// of its registered policies, an agent served elsewhere (grpc://HOST:PORT, when the
// server allows remote actors) or the person ("me, in this page"): the agent is then
// a client actor of the trial (TrialService.Pending and ClientAct), played in the
// page, with a timeout (60 s unless the person says otherwise; 0 waits for ever)
// after which the agent's default policy, or the first allowed action, plays the
// turn, as the form says in words.
//
// For an agent the person plays it shows the environment drawn for people: its SVG
// (the maze, the cart-pole, rock-paper-scissors with the score of the rounds seen),
// webtest's page under test as a page whose links and forms are buttons that play
// them (its empty action slots hidden), else its text; a legend and the agent's
// budget (the maze's strategy: "Decision 6 of 20"); a button per action with the
// masked ones disabled (a masked action is never sent, however its button is clicked
// or its key pressed, and the page says why); keyboard shortcuts (1-9 by position,
// the arrow keys for actions named UP, RIGHT, DOWN and LEFT); the reward the agent
// received for its previous turn (PendingResponse.last_reward: "Last turn: +0.5");
// the time left before the
// default acts; the messages delivered to the agent; and, when an episode ends, an
// outcome banner with its success, ticks and each agent's return, as
// TrialService.Episodes reports them. A timeline lists the turns played; a reward goes
// to the agent's next step or, with a turn chosen in the timeline, to the step of that
// tick (TrialService.Reward, source "human"). Messages go with the next action, each
// to one of the receivers the server names for the turn; should the server refuse
// one, the page drops the queued messages, which a button drops too, so that no
// message can block the next action.
//
// Feedback stands next to the control that caused it (the key field, the start
// button, a bar over the game that stays in view, the reward and message forms) and
// goes when it is no longer true. When the server does not answer, a banner says so
// and the page tries again every second; once it answers, the page reads the trials
// again (those a restarted server no longer has leave the list) and the game goes on.
//
// A list follows every trial live, with each agent's return per episode drawn as a
// small SVG chart with its axes and last values (of a long trial, the last episodes
// the server keeps), says why a pending or running trial waits, and offers to play
// on a trial whose agents people play when the page does not play it (it was loaded
// again, or started elsewhere): the trial waits for its person, who finds it there.
// A row is redrawn only when what it shows changed.
//
// The page watches a trial that policies play drawn step by step, at a speed the
// person chooses: it asks "/ui/frame" (Handler's WithTrials; runners.Controller.Frame)
// for the trial's latest frame, and each call keeps the trial drawing its steps for a
// while, waiting the chosen pace after each. It opens a trial started without a
// person there, started watched (StartRequest.watched and watch_pace_ms, at the speed
// chosen in the start form) so that it is drawn from its first step however soon it
// ends, and any pending or running trial from its row.
//
// # Following trials
//
// The page follows the trials it knows of with one TrialService.Watch stream, read
// with fetch's streaming body reader as Connect envelopes (application/connect+json):
// a change of state shows at once, the final one with the trial's result and its
// returns per episode, and on a change to running the page reads the episodes the
// trial completed so far (Episodes). One stream for all trials, replaced by a wider one when the page learns
// of another trial, because a browser keeps only a few HTTP/1.1 connections to a
// server and each stream holds one. A trial that finishes while its person is to act
// ends the game in the page. Polling is the fallback: every 2 s (?poll=MS in the
// page's address sets the period; ?poll=0 never polls) the page calls List (page after
// page), for the
// trials others started and the tick of running ones, and Episodes, for the episodes
// a running trial completed, which Watch does not carry; a poll also opens the stream
// again after it broke, and reads the episodes of a trial that finished meanwhile,
// whose result the stream did not bring.
//
// # How it talks to the server
//
// Only through the baton.v1 services, as any client does: the page calls the
// server's JSON gateway (the Connect protocol's JSON form; see package remote) with
// fetch, the API key in the "Authorization: Bearer KEY" header. The person types the
// key in the page's key field, or follows a link that carries it in its fragment
// (http://HOST:PORT/#key=KEY; a fragment never goes to the server); the page keeps
// it in the browser's local storage and takes it out of the address bar. Without
// the key a server that has keys refuses every call (401) and the page says so, next
// to the key field. Two other paths: /ui/envs.json lists the registered environments,
// their agents and the agents' policies, as `baton serve ui --help` does (the start
// form needs them and baton.v1 does not carry policy names), and /ui/frame answers a
// watched trial's latest frame to a caller whose key grants the trial's environment,
// as the trial service's keys do (remote.Keys.Check). With WithModels (`baton serve
// ui --models DIR`), /ui/models.json lists the newest version of each model of a
// registry that the caller's key grants, with its learning curve in bins
// (ModelInfo); the page draws each curve with the trials' chart in a Models section
// and asks again at every poll, so that a learner's new checkpoint shows as it
// arrives.
//
// # Why plain files
//
// The page is one HTML file, one stylesheet and one script, written for today's
// browsers (ES2020 modules, fetch streams) and embedded in the binary with go:embed.
// There is no build step, no Node toolchain at run time and no dependency to keep up
// to date (the browser test's playwright-core and axe-core are pinned in
// tools/webui-e2e and never served):
// the files served are the files in the repository, `go build` is all it takes, and
// anyone can read and change them. The page is small enough that a framework would
// cost more than it saves.
//
// # Concurrency
//
// The handler of Handler is safe for concurrent use.
package webui
