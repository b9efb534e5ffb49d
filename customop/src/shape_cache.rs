//! The shape functions' answers a process keeps: a library's worker (its
//! calls) and the Python layer (fake tensors under tracing).

use crate::error::Result;
use crate::schema::Op;
use crate::shape::{self, OutputSpec, Value};
use crate::sim::SimApi;

/// The shape functions' answers, per op (its index in the library's
/// table) and arguments (dtypes and shapes of tensors, values of
/// numbers): each evaluation stands up a simulator to run on, which costs
/// more than the rest of a small call. Only answers are kept: a failing
/// shape function runs (and fails) again on every call.
#[derive(Default)]
pub struct ShapeCache {
    answers: std::collections::HashMap<Key, OutputSpec>,
}

type Key = (usize, Vec<ShapeKey>);

/// One argument as a cache key (a float by its bits: NaN is a value too).
#[derive(Clone, PartialEq, Eq, Hash)]
enum ShapeKey {
    Tensor(u8, Vec<u64>),
    Int(i64),
    Float(u64),
}

/// Answers kept at most (a loop over ever-new shapes does not grow it
/// without bound).
const SHAPE_CACHE_MAX: usize = 4096;

fn key(index: usize, values: &[Value]) -> Key {
    let k = values
        .iter()
        .map(|v| match v {
            Value::Tensor(d, s) => ShapeKey::Tensor(d.code(), s.clone()),
            Value::Int(i) => ShapeKey::Int(*i),
            Value::Float(f) => ShapeKey::Float(f.to_bits()),
        })
        .collect();
    (index, k)
}

impl ShapeCache {
    /// The answer kept for op `index` on `values`, if any.
    pub fn get(&self, index: usize, values: &[Value]) -> Option<OutputSpec> {
        self.answers.get(&key(index, values)).cloned()
    }

    /// Keeps `spec` as op `index`'s answer on `values`.
    pub fn insert(&mut self, index: usize, values: &[Value], spec: OutputSpec) {
        if self.answers.len() >= SHAPE_CACHE_MAX {
            self.answers.clear();
        }
        self.answers.insert(key(index, values), spec);
    }

    /// The answer for op `index` on `values`, evaluated in this process
    /// when not kept (a worker's: a crash there is the worker's).
    pub fn evaluate(&mut self, api: &SimApi, op: &Op, index: usize, values: Vec<Value>) -> Result<OutputSpec> {
        if let Some(spec) = self.get(index, &values) {
            return Ok(spec);
        }
        let spec = shape::evaluate(api, op, &values)?;
        self.insert(index, &values, spec.clone());
        Ok(spec)
    }
}
