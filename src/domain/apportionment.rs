//! Apportionment (rateio) arithmetic: what each classification center receives of an
//! amount, whether the items add up to it, and how an apportionment is spread over the
//! parcels of a series. The checks against the request and the database live in
//! `ops::apportionment`.

use std::collections::HashMap;

use super::money::Cents;

/// A checked item of an apportionment.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    pub center_id: String,
    pub percentage_bp: Option<i64>,
    pub amount: Option<Cents>,
    /// What the center receives.
    pub effective: Cents,
}

impl Allocation {
    /// A single center taking 100 % of `amount`.
    pub fn whole(center_id: String, amount: Cents) -> Allocation {
        Allocation { center_id, percentage_bp: Some(10_000), amount: None, effective: amount }
    }
}

/// The items add up to `total` within R$ 0.01; the refusal carries the actual sum.
pub fn adds_up(total: Cents, items: &[Allocation]) -> Result<(), Cents> {
    if items.is_empty() {
        return Ok(());
    }
    let sum: i128 = items.iter().map(|a| i128::from(a.effective.0)).sum();
    if (sum - i128::from(total.0)).abs() > 1 {
        return Err(Cents(i64::try_from(sum).unwrap_or(i64::MAX)));
    }
    Ok(())
}

/// The apportionment of each parcel of `total` split into `parcels`: percentages are
/// kept and an item with a percentage gets its amount (when it had one) recomputed from
/// the percentage on each parcel; amount-only items are split across the parcels in
/// proportion to the parcel amounts, to the cent, and — with `last_takes_rest` — the
/// last parcel takes what is left so that each item's amounts add up to the amount
/// sent. With one parcel different from the total this rescales an apportionment to a
/// new amount (a settlement's ticket amount).
pub fn spread(items: &[Allocation], total: Cents, parcels: &[Cents], last_takes_rest: bool) -> Vec<Vec<Allocation>> {
    let amount_only: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, a)| a.percentage_bp.is_none() && a.amount.is_some())
        .map(|(i, _)| i)
        .collect();
    let sum_amount_only: i128 = amount_only.iter().filter_map(|i| items[*i].amount).map(|a| a.0 as i128).sum();
    let mut given = vec![0i64; items.len()];
    let mut out = Vec::with_capacity(parcels.len());
    for (k, parcel) in parcels.iter().enumerate() {
        let last_parcel = last_takes_rest && k + 1 == parcels.len();
        let mut shares: HashMap<usize, i64> = HashMap::new();
        if last_parcel {
            for i in &amount_only {
                let a = items[*i].amount.map(|a| a.0).unwrap_or(0);
                shares.insert(*i, (a - given[*i]).max(0));
            }
        } else if total.0 > 0 {
            let target = ((sum_amount_only * parcel.0 as i128 + total.0 as i128 / 2) / total.0 as i128) as i64;
            let mut assigned = 0i64;
            for (pos, i) in amount_only.iter().enumerate() {
                let a = items[*i].amount.map(|a| a.0).unwrap_or(0) as i128;
                let share = if pos + 1 == amount_only.len() {
                    (target - assigned).max(0)
                } else {
                    (a * parcel.0 as i128 / total.0 as i128) as i64
                };
                assigned += share;
                shares.insert(*i, share);
            }
        }
        let mut row = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let (amount, effective) = match (item.percentage_bp, shares.get(&i)) {
                (Some(bp), _) => {
                    let p = parcel.percentage(bp);
                    (item.amount.map(|_| p), p)
                }
                (None, Some(share)) => {
                    given[i] += *share;
                    (Some(Cents(*share)), Cents(*share))
                }
                (None, None) => (item.amount, item.amount.unwrap_or_default()),
            };
            row.push(Allocation {
                center_id: item.center_id.clone(),
                percentage_bp: item.percentage_bp,
                amount,
                effective,
            });
        }
        out.push(row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amount_only_items_are_split_across_parcels_and_add_up() {
        let items = vec![
            Allocation {
                center_id: "a".into(),
                percentage_bp: None,
                amount: Some(Cents(7001)),
                effective: Cents(7001),
            },
            Allocation {
                center_id: "b".into(),
                percentage_bp: None,
                amount: Some(Cents(2999)),
                effective: Cents(2999),
            },
        ];
        let parcels = Cents(10_000).split(3);
        let rows = spread(&items, Cents(10_000), &parcels, true);
        for (row, parcel) in rows.iter().zip(&parcels) {
            assert_eq!(row.iter().map(|a| a.effective.0).sum::<i64>(), parcel.0);
        }
        for (i, item) in items.iter().enumerate() {
            assert_eq!(rows.iter().map(|row| row[i].amount.unwrap().0).sum::<i64>(), item.amount.unwrap().0);
        }
        let pct = vec![Allocation::whole("a".into(), Cents(10_000))];
        assert_eq!(spread(&pct, Cents(10_000), &[Cents(12_000)], false)[0][0].effective, Cents(12_000));
    }

    #[test]
    fn an_apportionment_adds_up_within_a_cent() {
        let item = |c: i64| Allocation {
            center_id: String::new(),
            percentage_bp: None,
            amount: Some(Cents(c)),
            effective: Cents(c),
        };
        assert_eq!(adds_up(Cents(10_000), &[item(3333), item(3333), item(3333)]), Ok(()));
        assert_eq!(adds_up(Cents(10_000), &[item(5000), item(4000)]), Err(Cents(9000)));
        assert_eq!(adds_up(Cents(10_000), &[]), Ok(()));
    }
}
