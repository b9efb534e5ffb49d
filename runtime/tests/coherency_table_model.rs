//! The coherency table against a map of enforcers: random registers,
//! releases and policy changes over a few addresses on a small table. The
//! model keeps an enforcer per address while it has accessors or a policy
//! other than `COHERENT` and refuses a new address when `N` are kept; the
//! table must give the same result for every step and the same entry
//! count after it (its scan bound `used` may only skip empty keys).

use neuron_runtime::access::coherency_table::CoherencyTable;
use neuron_runtime::access::{AccessorKind, CoherencePolicy, CoherencyEnforcer};
use neuron_runtime::Error;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::BTreeMap;

const N: usize = 4;
const CASES: u32 = if cfg!(miri) { 2 } else { 512 };
const STEPS: std::ops::Range<usize> = if cfg!(miri) { 4..12 } else { 1..96 };

#[derive(Clone, Debug)]
enum Op {
    Register(u64, AccessorKind),
    Release(u64, AccessorKind),
    Policy(u64, CoherencePolicy),
}

fn op() -> impl Strategy<Value = Op> {
    // Six addresses (0 among them) for four slots: the table fills.
    let addr = (0u64..6).prop_map(|a| a * 0x1000);
    let kind = proptest::sample::select(AccessorKind::ALL.to_vec());
    let policy = proptest::sample::select(CoherencePolicy::ALL.to_vec());
    prop_oneof![
        (addr.clone(), kind.clone()).prop_map(|(a, k)| Op::Register(a, k)),
        (addr.clone(), kind).prop_map(|(a, k)| Op::Release(a, k)),
        (addr, policy).prop_map(|(a, p)| Op::Policy(a, p)),
    ]
}

#[derive(Default)]
struct Model(BTreeMap<u64, CoherencyEnforcer>);

impl Model {
    fn entry(&mut self, a: u64) -> Result<&mut CoherencyEnforcer, Error> {
        if a == 0 {
            return Err(Error::NullStorage);
        }
        if !self.0.contains_key(&a) && self.0.len() == N {
            return Err(Error::CoherencyTableFull);
        }
        Ok(self.0.entry(a).or_default())
    }

    fn reclaim(&mut self) {
        self.0.retain(|_, e| !(e.is_idle() && e.policy() == CoherencePolicy::Coherent));
    }

    fn apply(&mut self, op: &Op) -> Result<(), Error> {
        let r = match *op {
            Op::Register(_, AccessorKind::Tcm) | Op::Release(_, AccessorKind::Tcm) => Ok(()),
            Op::Register(a, k) => self.entry(a).and_then(|e| e.register(k)).map(|_| ()),
            Op::Release(a, k) => match self.0.get_mut(&a) {
                Some(e) => e.release(k),
                None => Err(Error::AccessorNotRegistered),
            },
            Op::Policy(0, _) => Err(Error::NullStorage),
            Op::Policy(a, CoherencePolicy::Coherent) if !self.0.contains_key(&a) => Ok(()),
            Op::Policy(a, p) => self.entry(a).map(|e| e.set_policy(p)),
        };
        self.reclaim();
        r
    }
}

#[test]
fn table_matches_a_map_of_enforcers() {
    let mut runner = TestRunner::new(Config { cases: CASES, failure_persistence: None, ..Config::default() });
    let r = runner.run(&proptest::collection::vec(op(), STEPS), |ops| {
        let mut t = CoherencyTable::<N>::new();
        let mut m = Model::default();
        for (i, op) in ops.iter().enumerate() {
            let got = match *op {
                Op::Register(a, k) => t.register(a, k).map(|_| ()),
                Op::Release(a, k) => t.release(a, k),
                Op::Policy(a, p) => t.set_policy(a, p),
            };
            prop_assert_eq!(got, m.apply(op), "step {}: {:?}", i, op);
            prop_assert_eq!(t.len(), m.0.len(), "entries after step {}", i);
            for (a, e) in &m.0 {
                prop_assert_eq!(t.get(*a), Some(e), "enforcer of {:#x} after step {}", a, i);
            }
        }
        Ok(())
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}
