import CryptoJS from "crypto-js";
const key = CryptoJS.enc.Hex.parse("000102030405060708090a0b0c0d0e0f");
const iv = CryptoJS.enc.Hex.parse("0f0e0d0c0b0a09080706050403020100");
const enc = CryptoJS.AES.encrypt("my message", key, { iv });
return {
  sha256: CryptoJS.SHA256("Message").toString(),
  md5: CryptoJS.MD5("Message").toString(),
  hmac: CryptoJS.HmacSHA256("Message", "secret").toString(CryptoJS.enc.Base64),
  aes: enc.toString(),
  decrypted: CryptoJS.AES.decrypt(enc.toString(), key, { iv }).toString(CryptoJS.enc.Utf8),
  base64: CryptoJS.enc.Base64.stringify(CryptoJS.enc.Utf8.parse("héllo")),
};
