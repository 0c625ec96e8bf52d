//! The JavaScript/TypeScript frontend.
use std::collections::BTreeMap;

use crate::ir::{Escalation, Identity};
use crate::lang::{Found, Frontend, Region};
use crate::spec::{FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

pub struct JavaScript;

impl Frontend for JavaScript {
    fn find_regions<'a>(&self, _syntax: &'a Syntax, _kind: &RegionKind) -> Vec<Node<'a>> {
        Vec::new()
    }
    fn calls<'a>(&self, _region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        Vec::new()
    }
    fn extract<'a>(&self, _r: &Region<'a>, _s: &FactSpec, _f: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        Ok(None)
    }
}
