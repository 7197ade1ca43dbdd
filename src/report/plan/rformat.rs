//! Numbers printed the way R prints a column of a numeric matrix (SLOB.R's
//! tables are R matrices printed with R's default `digits = 7`), so a dbio
//! table can be compared with SLOB.R's output digit by digit.
//!
//! R's rule (`formatReal`): each value needs the fewest significant digits
//! (at most `digits`) that show it to `digits` significant digits; the
//! column takes as many decimals as its most demanding value needs, in
//! fixed notation unless scientific notation is narrower.

/// (exponent, significant digits needed) of a finite non-zero |x|.
fn scientific(x: f64, digits: u8) -> (i32, usize) {
    let s = format!("{:.*e}", usize::from(digits.max(1)) - 1, x.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sig = mant.replace('.', "");
    let sig = sig.trim_end_matches('0');
    (exp, sig.len().max(1))
}

/// How R prints a column: fixed with `decimals`, or scientific with
/// `mantissa` significant digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    fixed: bool,
    decimals: usize,
    mantissa: usize,
}

/// The layout R chooses for a column holding `values` (non-finite ones
/// aside).
pub fn layout(values: &[f64], digits: u8) -> Layout {
    let mut neg = 0i32;
    let (mut mxsl, mut rgt, mut mxe, mut mxns) = (1i32, 0i32, 1i32, 1usize);
    for &x in values.iter().filter(|v| v.is_finite()) {
        if x < 0.0 {
            neg = 1;
        }
        let (kp, nsig) = if x == 0.0 {
            (0, 1)
        } else {
            scientific(x, digits)
        };
        // Fixed: digits left of the point, decimals needed.
        mxsl = mxsl.max(kp + 1);
        rgt = rgt.max(nsig as i32 - kp - 1);
        mxe = mxe.max(kp.abs());
        mxns = mxns.max(nsig);
    }
    let rgt = rgt.max(0);
    let fixed_width = neg + mxsl + if rgt > 0 { rgt + 1 } else { 0 };
    let exp_width = if mxe >= 100 { 3 } else { 2 };
    let sci_width = neg + mxns as i32 + i32::from(mxns > 1) + 2 + exp_width;
    Layout {
        fixed: fixed_width <= sci_width,
        decimals: rgt as usize,
        mantissa: mxns,
    }
}

impl Layout {
    /// `x` in this layout.
    pub fn format(&self, x: f64) -> String {
        if x.is_nan() {
            "NaN".into()
        } else if x.is_infinite() {
            if x > 0.0 { "Inf".into() } else { "-Inf".into() }
        } else if self.fixed {
            format!("{x:.*}", self.decimals)
        } else {
            let s = format!("{x:.*e}", self.mantissa - 1);
            let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
            let e: i32 = e.parse().unwrap_or(0);
            format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column as R prints it; `None` stays `None`.
    fn format_column(values: &[Option<f64>], digits: u8) -> Vec<Option<String>> {
        let present: Vec<f64> = values.iter().flatten().copied().collect();
        let l = layout(&present, digits);
        values.iter().map(|v| v.map(|x| l.format(x))).collect()
    }

    fn col(v: &[f64]) -> Vec<String> {
        format_column(&v.iter().map(|x| Some(*x)).collect::<Vec<_>>(), 7)
            .into_iter()
            .map(Option::unwrap)
            .collect()
    }

    #[test]
    fn columns_print_like_r() {
        // Values and the strings R 4 prints for print(matrix(c(...))).
        assert_eq!(col(&[27223.886, 30076.7749]), ["27223.89", "30076.77"]);
        assert_eq!(col(&[326480426.2, 304188997.0]), ["326480426", "304188997"]);
        assert_eq!(col(&[1.0, 2.5]), ["1.0", "2.5"]);
        assert_eq!(col(&[100.0, 200.0]), ["100", "200"]);
        assert_eq!(col(&[1.0 / 3.0]), ["0.3333333"]);
        assert_eq!(col(&[0.000012345]), ["1.2345e-05"]);
        assert_eq!(col(&[-1.5, 2.25]), ["-1.50", "2.25"]);
        assert_eq!(
            format_column(&[None, Some(2.0)], 7),
            [None, Some("2".to_string())]
        );
    }
}
