//! The shape functions' answers a worker keeps.

use crate::error::Result;
use crate::schema::Op;
use crate::shape::{self, OutputSpec, Value};
use crate::sim::SimApi;

/// The shape functions' answers in this worker, per op and arguments
/// (dtypes and shapes of tensors, values of numbers): each evaluation
/// stands up a simulator to run on, which cost more than the rest of a
/// small call. Only answers are kept: a failing shape function runs (and
/// fails) again on every call.
#[derive(Default)]
pub(super) struct ShapeCache {
    answers: std::collections::HashMap<(usize, Vec<ShapeKey>), OutputSpec>,
}

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

impl ShapeCache {
    pub(super) fn evaluate(&mut self, api: &SimApi, op: &Op, index: usize, values: Vec<Value>) -> Result<OutputSpec> {
        let key: Vec<ShapeKey> = values
            .iter()
            .map(|v| match v {
                Value::Tensor(d, s) => ShapeKey::Tensor(d.code(), s.clone()),
                Value::Int(i) => ShapeKey::Int(*i),
                Value::Float(f) => ShapeKey::Float(f.to_bits()),
            })
            .collect();
        let key = (index, key);
        if let Some(spec) = self.answers.get(&key) {
            return Ok(spec.clone());
        }
        let spec = shape::evaluate(api, op, &values)?;
        if self.answers.len() >= SHAPE_CACHE_MAX {
            self.answers.clear();
        }
        self.answers.insert(key, spec.clone());
        Ok(spec)
    }
}
