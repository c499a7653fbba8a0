// Test keys, made for this app alone (a real app reads them from its environment).
export const SECRET = "whsec_MnYd5l/2D0lJSEQRG2gtxOoa2R7pMk0SpdSDzE/adUk=";
export const PUBLIC_KEY = "whpk_IzIvT9PMW360NEGsQtKQhcN6cSIIgZPTYf09c1IhDik=";
export const PRIVATE_KEY = "whsk_bHFVLSly6mJL1Yrc06VIESnswZ6il77LrwvZdRHj/RY=";
export const GITHUB_SECRET = "next-edge-github-secret";
