//! An explicit-state model checker, small enough to read in one sitting:
//! breadth-first search over every reachable state of a [`Model`] (so a
//! counterexample trace is a shortest one), with
//! - safety: a predicate on every state ([`Graph::invariant`]) or on every
//!   step, before and after an action ([`Graph::step`]);
//! - CTL `AG EF q` ([`Graph::always_can_reach`]): from every reachable state
//!   some path reaches `q`;
//! - LTL `G (p -> F q)` under weak and strong fairness of action classes
//!   ([`Graph::leads_to`]): no fair infinite path, and no deadlocked finite
//!   one, stays outside `q` after a `p` state. It looks for fair strongly
//!   connected components of the `not q` subgraph, refining by strong
//!   fairness as Emerson and Lei do.
//!
//! The model is explored to completion: the state space is finite by
//! construction, so "checked" means checked on every reachable state and
//! transition, not sampled.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::{self, Debug, Write as _};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A transition system: initial states and the actions tried in each state.
pub trait Model {
    type State: Clone + Eq + Hash + Debug;
    type Action: Clone + Copy + Eq + Debug;
    fn init(&self) -> Vec<Self::State>;
    /// Every action worth trying in `s`, enabled or not.
    fn actions(&self, s: &Self::State, out: &mut Vec<Self::Action>);
    /// The state after `a`, `None` when `a` is not enabled in `s` (the protocol refuses it).
    fn next(&self, s: &Self::State, a: Self::Action) -> Option<Self::State>;
    /// The fairness an action taken in `s` is scheduled with, if any.
    fn fairness(&self, _s: &Self::State, _a: Self::Action) -> Option<Fairness> {
        None
    }
}

/// How an action class is scheduled on an infinite run: weakly (if it stays
/// enabled it is eventually taken) or strongly (if it is enabled again and
/// again it is eventually taken). The number names the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fairness {
    Weak(u32),
    Strong(u32),
}

/// Every reachable state and transition of a model.
pub struct Graph<M: Model> {
    pub states: Vec<M::State>,
    offsets: Vec<usize>,
    edges: Vec<(M::Action, u32)>,
    parent: Vec<Option<(u32, M::Action)>>,
    /// How long the exploration took.
    pub elapsed: Duration,
    /// Predecessors of each state, computed once when first needed.
    preds: OnceLock<Vec<Vec<u32>>>,
}

/// FNV-1a: the state hash of the exploration (the standard SipHash is built
/// to resist hostile keys, which a model's own states are not, and is slower).
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// The state index of the exploration: looked up, never iterated, and
/// hashed with a fixed function, so nothing depends on an order.
#[allow(clippy::disallowed_types)] // reason: millions of lookups, no iteration; a BTreeMap doubles the exploration time
type Index<S> = std::collections::HashMap<S, u32, BuildHasherDefault<Fnv>>;

/// Which fairness an action taken in a state is scheduled with.
pub type Schedule<'a, M> = dyn Fn(&<M as Model>::State, <M as Model>::Action) -> Option<Fairness> + 'a;

/// A path that violates a property: from an initial state to the violation,
/// and for liveness the loop (or deadlock) that never reaches the goal.
pub struct Counterexample<M: Model> {
    pub property: String,
    /// `(action taken to get here, state)`, the first with no action.
    pub path: Vec<(Option<M::Action>, M::State)>,
    /// For liveness: the states the fair run then cycles through forever
    /// (empty when the run deadlocks at the path's end).
    pub cycle: Vec<(Option<M::Action>, M::State)>,
}

impl<M: Model> fmt::Display for Counterexample<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "counterexample to {} ({} steps):", self.property, self.path.len().saturating_sub(1))?;
        for (i, (action, state)) in self.path.iter().enumerate() {
            match action {
                None => writeln!(f, "  {i:>3}. init  {state:?}")?,
                Some(a) => writeln!(f, "  {i:>3}. {a:?}\n       -> {state:?}")?,
            }
        }
        if !self.cycle.is_empty() {
            writeln!(f, "  then forever, under fair scheduling:")?;
            for (action, state) in &self.cycle {
                writeln!(f, "       {:?}\n       -> {state:?}", action.map_or(String::new(), |a| format!("{a:?}")))?;
            }
        } else if self.property.starts_with('L') || self.property.starts_with('F') {
            writeln!(f, "  then nothing is enabled: the run stops here without reaching the goal")?;
        }
        Ok(())
    }
}

impl<M: Model> Debug for Counterexample<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<M: Model> Graph<M> {
    /// Explores every state reachable from the model's initial states.
    pub fn explore(model: &M) -> Graph<M> {
        match Graph::explore_until(model, "", |_, _, _| true) {
            Ok(g) => g,
            Err(_) => unreachable!("nothing is bad"),
        }
    }

    /// Explores breadth-first, checking `ok` on every step as it is found;
    /// stops at the first step where it fails, with that (shortest)
    /// counterexample. What a mutant test needs: no full exploration.
    pub fn explore_until(model: &M, property: &str, ok: impl Fn(&M::State, M::Action, &M::State) -> bool) -> Result<Graph<M>, Box<Counterexample<M>>> {
        let start = Instant::now();
        let mut g = Graph { states: Vec::new(), offsets: vec![0], edges: Vec::new(), parent: Vec::new(), elapsed: Duration::ZERO, preds: OnceLock::new() };
        let mut index: Index<M::State> = Index::default();
        for s in model.init() {
            if !index.contains_key(&s) {
                index.insert(s.clone(), g.states.len() as u32);
                g.states.push(s);
                g.parent.push(None);
            }
        }
        let mut actions = Vec::new();
        let mut i = 0;
        while i < g.states.len() {
            actions.clear();
            model.actions(&g.states[i], &mut actions);
            for &a in &actions {
                let Some(t) = model.next(&g.states[i], a) else { continue };
                if !ok(&g.states[i], a, &t) {
                    let mut path = g.path_to(i);
                    path.push((Some(a), t));
                    return Err(Box::new(Counterexample { property: property.into(), path, cycle: Vec::new() }));
                }
                let j = match index.get(&t) {
                    Some(&j) => j,
                    None => {
                        let j = g.states.len() as u32;
                        index.insert(t.clone(), j);
                        g.states.push(t);
                        g.parent.push(Some((i as u32, a)));
                        j
                    }
                };
                g.edges.push((a, j));
            }
            g.offsets.push(g.edges.len());
            i += 1;
        }
        g.elapsed = start.elapsed();
        Ok(g)
    }

    /// The number of transitions explored.
    pub fn transitions(&self) -> usize {
        self.edges.len()
    }

    fn out(&self, i: usize) -> &[(M::Action, u32)] {
        &self.edges[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The shortest path from an initial state to state `i`.
    pub fn path_to(&self, i: usize) -> Vec<(Option<M::Action>, M::State)> {
        let mut path = vec![(None, self.states[i].clone())];
        let mut at = i;
        while let Some((p, a)) = self.parent[at] {
            path.last_mut().unwrap().0 = Some(a);
            path.push((None, self.states[p as usize].clone()));
            at = p as usize;
        }
        path.reverse();
        path
    }

    /// `G ok`: the first (shortest) state where `ok` fails.
    pub fn invariant(&self, property: &str, ok: impl Fn(&M::State) -> bool) -> Result<(), Box<Counterexample<M>>> {
        match (0..self.states.len()).find(|&i| !ok(&self.states[i])) {
            None => Ok(()),
            Some(i) => Err(Box::new(Counterexample { property: property.into(), path: self.path_to(i), cycle: Vec::new() })),
        }
    }

    /// `G (before, action, after) ok`: the first step where `ok` fails.
    pub fn step(&self, property: &str, ok: impl Fn(&M::State, M::Action, &M::State) -> bool) -> Result<(), Box<Counterexample<M>>> {
        for i in 0..self.states.len() {
            for &(a, j) in self.out(i) {
                if !ok(&self.states[i], a, &self.states[j as usize]) {
                    let mut path = self.path_to(i);
                    path.push((Some(a), self.states[j as usize].clone()));
                    return Err(Box::new(Counterexample { property: property.into(), path, cycle: Vec::new() }));
                }
            }
        }
        Ok(())
    }

    /// Every action taken on some reachable transition, with one step taking it.
    pub fn taken(&self) -> Vec<(M::State, M::Action, M::State)> {
        (0..self.states.len()).flat_map(|i| self.out(i).iter().map(move |&(a, j)| (self.states[i].clone(), a, self.states[j as usize].clone()))).collect()
    }

    /// States (as a mask) that can reach a `target` state through states of `within`.
    fn backward(&self, target: &[bool], within: &[bool]) -> Vec<bool> {
        let n = self.states.len();
        let preds = self.preds.get_or_init(|| {
            let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
            for i in 0..n {
                for &(_, j) in self.out(i) {
                    preds[j as usize].push(i as u32);
                }
            }
            preds
        });
        let mut reach = target.to_vec();
        let mut queue: VecDeque<usize> = (0..n).filter(|&i| target[i]).collect();
        while let Some(j) = queue.pop_front() {
            for &i in &preds[j] {
                let i = i as usize;
                if within[i] && !reach[i] {
                    reach[i] = true;
                    queue.push_back(i);
                }
            }
        }
        reach
    }

    /// CTL `AG EF goal`: from every reachable state some path reaches `goal`.
    pub fn always_can_reach(&self, property: &str, goal: impl Fn(&M::State) -> bool) -> Result<(), Box<Counterexample<M>>> {
        let target: Vec<bool> = self.states.iter().map(&goal).collect();
        let all = vec![true; self.states.len()];
        let reach = self.backward(&target, &all);
        match reach.iter().position(|r| !r) {
            None => Ok(()),
            Some(i) => Err(Box::new(Counterexample { property: property.into(), path: self.path_to(i), cycle: Vec::new() })),
        }
    }

    /// The strongly connected components of the subgraph on `member`,
    /// searched from `roots`, that can hold an infinite run (more than one
    /// state, or a self-loop). `index` and `low` are all `u32::MAX` on entry
    /// and are left so.
    fn sccs(&self, roots: &[u32], member: &[bool], index: &mut [u32], low: &mut [u32]) -> Vec<Vec<u32>> {
        let mut on_stack: Vec<bool> = Vec::new();
        let mut order: Vec<usize> = Vec::new();
        let (mut stack, mut call, mut out) = (Vec::new(), Vec::<(usize, usize)>::new(), Vec::new());
        let mut counter = 0u32;
        let mut visit = |w: usize, counter: &mut u32, index: &mut [u32], low: &mut [u32], stack: &mut Vec<usize>, on_stack: &mut Vec<bool>| {
            index[w] = *counter;
            low[w] = *counter;
            *counter += 1;
            stack.push(w);
            on_stack.push(true);
            order.push(w);
        };
        for &root in roots {
            let root = root as usize;
            if !member[root] || index[root] != u32::MAX {
                continue;
            }
            visit(root, &mut counter, index, low, &mut stack, &mut on_stack);
            call.push((root, self.offsets[root]));
            while let Some(&(v, pos)) = call.last() {
                if pos < self.offsets[v + 1] {
                    call.last_mut().unwrap().1 = pos + 1;
                    let w = self.edges[pos].1 as usize;
                    if !member[w] {
                        continue;
                    }
                    if index[w] == u32::MAX {
                        visit(w, &mut counter, index, low, &mut stack, &mut on_stack);
                        call.push((w, self.offsets[w]));
                    } else if on_stack[index[w] as usize] {
                        low[v] = low[v].min(index[w]);
                    }
                } else {
                    call.pop();
                    if let Some(&(u, _)) = call.last() {
                        low[u] = low[u].min(low[v]);
                    }
                    if low[v] == index[v] {
                        let mut component = Vec::new();
                        loop {
                            let w = stack.pop().unwrap();
                            on_stack[index[w] as usize] = false;
                            component.push(w as u32);
                            if w == v {
                                break;
                            }
                        }
                        let cyclic = component.len() > 1 || self.out(v).iter().any(|&(_, j)| j as usize == v);
                        if cyclic {
                            out.push(component);
                        }
                    }
                }
            }
        }
        for w in order {
            index[w] = u32::MAX;
            low[w] = u32::MAX;
        }
        out
    }

    /// The fairness classes enabled in state `i`, sorted, once each.
    fn enabled(&self, fairness: &Schedule<'_, M>, i: usize) -> Vec<Fairness> {
        let mut classes: Vec<Fairness> = self.out(i).iter().filter_map(|&(a, _)| fairness(&self.states[i], a)).collect();
        classes.sort();
        classes.dedup();
        classes
    }

    /// The states of `member` that lie on a fair cycle inside it.
    fn fair_cycles(&self, fairness: &Schedule<'_, M>, member: &[bool]) -> Vec<bool> {
        let n = self.states.len();
        let mut fair = vec![false; n];
        let (mut index, mut low) = (vec![u32::MAX; n], vec![u32::MAX; n]);
        let mut mask = vec![false; n];
        let mut work: Vec<Vec<u32>> = vec![(0..n as u32).filter(|&i| member[i as usize]).collect()];
        while let Some(nodes) = work.pop() {
            for &v in &nodes {
                mask[v as usize] = true;
            }
            let components = self.sccs(&nodes, &mask, &mut index, &mut low);
            for &v in &nodes {
                mask[v as usize] = false;
            }
            for component in components {
                for &v in &component {
                    mask[v as usize] = true;
                }
                let mut taken = BTreeSet::new();
                let mut enabled_in: BTreeMap<Fairness, usize> = BTreeMap::new();
                let mut enabled_sets = Vec::with_capacity(component.len());
                for &s in &component {
                    for &(a, j) in self.out(s as usize) {
                        if mask[j as usize]
                            && let Some(c) = fairness(&self.states[s as usize], a)
                        {
                            taken.insert(c);
                        }
                    }
                    let set = self.enabled(fairness, s as usize);
                    for &c in &set {
                        *enabled_in.entry(c).or_default() += 1;
                    }
                    enabled_sets.push(set);
                }
                for &v in &component {
                    mask[v as usize] = false;
                }
                // Weak: a class enabled in every state of the component and never taken inside it rules the component out.
                if enabled_in.iter().any(|(c, &k)| matches!(c, Fairness::Weak(_)) && !taken.contains(c) && k == component.len()) {
                    continue;
                }
                // Strong: a class enabled somewhere inside and never taken inside: drop the states enabling it, and look again.
                let starved: Vec<Fairness> = enabled_in.keys().copied().filter(|c| matches!(c, Fairness::Strong(_)) && !taken.contains(c)).collect();
                if starved.is_empty() {
                    for &s in &component {
                        fair[s as usize] = true;
                    }
                    continue;
                }
                let rest: Vec<u32> = component.iter().zip(&enabled_sets).filter(|(_, set)| !set.iter().any(|c| starved.contains(c))).map(|(&s, _)| s).collect();
                if !rest.is_empty() {
                    work.push(rest);
                }
            }
        }
        fair
    }

    /// LTL `G (p -> F q)` under `fairness` (the model's is
    /// [`Model::fairness`]): from every reachable state where `p` holds,
    /// every fair run reaches `q`. A run that deadlocks before `q` violates it too.
    pub fn leads_to(
        &self,
        fairness: &Schedule<'_, M>,
        property: &str,
        p: impl Fn(&M::State) -> bool,
        q: impl Fn(&M::State) -> bool,
    ) -> Result<(), Box<Counterexample<M>>> {
        let n = self.states.len();
        let waiting: Vec<bool> = self.states.iter().map(|s| !q(s)).collect();
        let fair = self.fair_cycles(fairness, &waiting);
        let stuck: Vec<bool> = (0..n).map(|i| fair[i] || (waiting[i] && self.out(i).is_empty())).collect();
        let doomed = self.backward(&stuck, &waiting);
        let Some(start) = (0..n).find(|&i| doomed[i] && p(&self.states[i])) else { return Ok(()) };
        // From the violating state, the shortest way (outside q) to a fair cycle or a deadlock.
        let mut path = self.path_to(start);
        let mut from: BTreeMap<usize, (usize, M::Action)> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut end = start;
        while let Some(i) = queue.pop_front() {
            if stuck[i] {
                end = i;
                break;
            }
            for &(a, j) in self.out(i) {
                let j = j as usize;
                if doomed[j] && j != start && !from.contains_key(&j) {
                    from.insert(j, (i, a));
                    queue.push_back(j);
                }
            }
        }
        let mut tail = Vec::new();
        let mut at = end;
        while let Some(&(i, a)) = from.get(&at) {
            tail.push((Some(a), self.states[at].clone()));
            at = i;
        }
        tail.reverse();
        path.extend(tail);
        let cycle = if fair[end] { self.loop_through(end, &fair) } else { Vec::new() };
        Err(Box::new(Counterexample { property: property.into(), path, cycle }))
    }

    /// A shortest cycle from state `i` back to itself through `within`, for the trace.
    fn loop_through(&self, i: usize, within: &[bool]) -> Vec<(Option<M::Action>, M::State)> {
        let mut from: BTreeMap<usize, (usize, M::Action)> = BTreeMap::new();
        let mut queue = VecDeque::from([i]);
        while let Some(k) = queue.pop_front() {
            for &(a, j) in self.out(k) {
                let j = j as usize;
                if !within[j] || from.contains_key(&j) {
                    continue;
                }
                from.insert(j, (k, a));
                if j == i {
                    let mut cycle = Vec::new();
                    let mut at = i;
                    loop {
                        let (prev, a) = from[&at];
                        cycle.push((Some(a), self.states[at].clone()));
                        at = prev;
                        if at == i {
                            break;
                        }
                    }
                    cycle.reverse();
                    return cycle;
                }
                queue.push_back(j);
            }
        }
        Vec::new()
    }

    /// A one-line account: states, transitions, time.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "{} states, {} transitions, explored in {:.2?}", self.states.len(), self.edges.len(), self.elapsed);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter that may tick up to 3 and reset; reset is weakly fair when `fair`.
    struct Counter {
        fair: bool,
    }

    impl Model for Counter {
        type State = u8;
        type Action = char;
        fn init(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, _s: &u8, out: &mut Vec<char>) {
            out.extend(['+', '0', '=']);
        }
        fn next(&self, s: &u8, a: char) -> Option<u8> {
            match a {
                '+' if *s < 3 => Some(s + 1),
                '0' if *s > 0 => Some(0),
                '=' if *s == 3 => Some(3),
                _ => None,
            }
        }
        fn fairness(&self, _s: &u8, a: char) -> Option<Fairness> {
            (self.fair && a == '0').then_some(Fairness::Weak(0))
        }
    }

    #[test]
    fn the_checker_finds_what_is_there_and_only_that() {
        let g = Graph::explore(&Counter { fair: false });
        assert_eq!(g.states.len(), 4);
        assert!(g.invariant("small", |s| *s <= 3).is_ok());
        let e = g.invariant("tiny", |s| *s <= 1).unwrap_err();
        assert_eq!(e.path.len(), 3, "{e}");
        assert!(g.step("no reset from 2", |a, act, _| !(*a == 2 && act == '0')).is_err());
        assert!(g.always_can_reach("home", |s| *s == 0).is_ok());
        // Without fairness the counter may idle at 3 forever ('=' loops) and never return to 0.
        let unfair = g.leads_to(&|s, a| Counter { fair: false }.fairness(s, a), "L back home", |s| *s == 1, |s| *s == 0).unwrap_err();
        assert!(!unfair.cycle.is_empty(), "{unfair}");
        // With reset weakly fair, the loop at 3 keeps reset enabled and never takes it: not a fair run.
        let fair = Counter { fair: true };
        let g = Graph::explore(&fair);
        assert!(g.leads_to(&|s, a| fair.fairness(s, a), "L back home", |s| *s == 1, |s| *s == 0).is_ok());
    }

    /// 0 and 1 alternate forever; from 1 (only) one may go to 2 and stay.
    struct Blinker;

    impl Model for Blinker {
        type State = u8;
        type Action = char;
        fn init(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, _s: &u8, out: &mut Vec<char>) {
            out.extend(['~', 'g']);
        }
        fn next(&self, s: &u8, a: char) -> Option<u8> {
            match (s, a) {
                (0, '~') => Some(1),
                (1, '~') => Some(0),
                (1, 'g') | (2, _) => Some(2),
                _ => None,
            }
        }
    }

    #[test]
    fn strong_fairness_is_not_weak_fairness() {
        let g = Graph::explore(&Blinker);
        // 'g' is enabled only every other step: weak fairness lets the blinking go on forever ...
        let weak = g.leads_to(&|_, a| (a == 'g').then_some(Fairness::Weak(0)), "L reach 2", |s| *s == 0, |s| *s == 2).unwrap_err();
        assert_eq!(weak.cycle.len(), 2, "{weak}");
        // ... strong fairness does not: enabled again and again, it is taken.
        assert!(g.leads_to(&|_, a| (a == 'g').then_some(Fairness::Strong(0)), "L reach 2", |s| *s == 0, |s| *s == 2).is_ok());
    }
}
